#!/usr/bin/env bash
# Installs credo from config/default into the current cluster (the kind
# cluster of .github/workflows/e2e.yaml), with the image make release built,
# exported as ghcr.io/credo-dev/credo:e2e (hack/release export) and loaded
# into the nodes, applies the samples and runs the e2e suite against it.
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "${REPO_ROOT}"

IMAGE=${IMAGE:-ghcr.io/credo-dev/credo:e2e}
NAMESPACE=credo-system

echo "--- installing the Flux HelmRelease CRD"
kubectl apply --server-side -f config/testdata/crds/
kubectl wait --for=condition=Established --timeout=1m crd --all

echo "--- installing credo (${IMAGE})"
kubectl kustomize config/default \
  | sed "s#ghcr.io/credo-dev/credo:latest#${IMAGE}#g" \
  | kubectl apply --server-side -f -
kubectl wait --for=condition=Established --timeout=1m crd --all

echo "--- waiting for the controllers"
for deploy in $(kubectl -n "${NAMESPACE}" get deployments -o name); do
  kubectl -n "${NAMESPACE}" rollout status "${deploy}" --timeout=3m
done

echo "--- installing the access API (config/apiservice)"
# As users install it: the Service, the APIService and the delegated-auth
# bindings. The credential-controller fills the APIService's caBundle with the
# CA of its shared serving certificate (--access-api-inject-ca); Available means
# kube-apiserver reached it through the Service and trusted that CA.
kubectl apply --server-side -k config/apiservice
kubectl wait --for=condition=Available --timeout=3m apiservice/v1alpha1.access.credo.dev

echo "--- checking that each controller runs as its own ServiceAccount"
for c in trust-controller credential-controller enrollment-controller; do
  sas=$(kubectl -n "${NAMESPACE}" get pods -l "app.kubernetes.io/name=${c}" -o jsonpath='{.items[*].spec.serviceAccountName}')
  for sa in ${sas}; do
    if [ "${sa}" != "credo-${c}" ]; then
      echo "${c} runs as ${sa}, want credo-${c}"; exit 1
    fi
  done
done
# What tests/security checks in full on the local control plane, checked
# once on the installed cluster: the trust-controller deletes no Secret.
if kubectl auth can-i delete secrets --all-namespaces \
  --as="system:serviceaccount:${NAMESPACE}:credo-trust-controller" >/dev/null; then
  echo "the trust-controller may delete Secrets"; exit 1
fi

echo "--- applying the samples"
kubectl apply --server-side -k config/samples

echo "--- running the e2e suite"
# Skipped: the tests that need the local environment (agents, Flux controllers,
# restarts, metrics of local processes: tests/e2e localOnlyTests, kept in step); make test-e2e runs
# them.
E2E_KUBECONFIG=${KUBECONFIG:-$HOME/.kube/config} \
  go test -tags e2e -count=1 -timeout 20m -skip 'TestHeadlessPipelineGuide|TestFluxEventsShowReleaseWarnings|TestNotificationControllerDeliversReleaseWarnings|TestMintReachesTheRunningRelease|TestSuspendedReleaseIsReportedAndNotUpgraded|TestAgentsEnroll|TestExpiredAgent|TestAgentRefusals|TestEnrollmentCAIsPublished|TestEveryControllerServes' ./tests/e2e/...
