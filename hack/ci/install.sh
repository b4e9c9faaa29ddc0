#!/usr/bin/env bash
# Installs credo as users install it, into the current cluster (KUBECONFIG):
# config/default with the controllers' image replaced by IMAGE, then the
# access API (config/apiservice), and waits until every Deployment has
# rolled out and the APIService is Available. The Flux CRDs credo reads are
# installed from config/testdata/crds only where the cluster has none (kind
# with Flux installed keeps Flux's own).
#
# Run by hack/ci/e2e.sh, and by `make dev NODE=1` on the node of tests/node.
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "${REPO_ROOT}"

IMAGE=${IMAGE:-ghcr.io/credo-dev/credo:e2e}
NAMESPACE=credo-system

# On failure, what an operator would look at first.
trap 'hack/ci/debug.sh' ERR

echo "--- installing the CRDs credo reads that the cluster lacks"
for f in config/testdata/crds/*.yaml; do
  name=$(basename "${f}" .yaml | sed 's/_/ /' | awk '{print $2"."$1}')
  if ! kubectl get crd "${name}" >/dev/null 2>&1; then
    kubectl apply --server-side -f "${f}"
  fi
done
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
