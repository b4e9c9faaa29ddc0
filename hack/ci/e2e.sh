#!/usr/bin/env bash
# The e2e run against an installed credo, the same wherever it runs: on the
# node of tests/node here (make test-e2e-node, which .ci/run runs) and on
# kind (.github/workflows/e2e.yaml). It installs credo (hack/ci/install.sh,
# IMAGE), checks what the install must hold, applies the samples and runs
# the e2e suite against the cluster. The suite itself leaves out the tests
# that need the local environment (tests/e2e/modes_test.go: localOnlyTests;
# make test-e2e runs those), so no list is kept here.
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "${REPO_ROOT}"

NAMESPACE=credo-system

hack/ci/install.sh
# From here on, a failure (the suite's included) prints the controllers'
# state and logs: on the node they go with it.
trap 'hack/ci/debug.sh' ERR

echo "--- checking that each controller runs as its own ServiceAccount"
for c in trust-controller credential-controller enrollment-controller; do
  sas=$(kubectl -n "${NAMESPACE}" get pods -l "app.kubernetes.io/name=${c}" -o jsonpath='{.items[*].spec.serviceAccountName}')
  if [ -z "${sas}" ]; then
    echo "no pods of ${c}"; exit 1
  fi
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

echo "--- running the e2e suite against the cluster"
E2E_KUBECONFIG=${KUBECONFIG:-$HOME/.kube/config} \
  go test -tags e2e -count=1 -timeout 20m -v ./tests/e2e/... 2>&1 | grep -v "^=== \(RUN\|PAUSE\|CONT\)"
