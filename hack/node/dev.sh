#!/usr/bin/env bash
# `make dev NODE=1`: installs credo on the node bin/credo-node runs
# (hack/ci/install.sh, the release image in pods), applies the samples and
# says how to look at it. bin/credo-node keeps the cluster until Ctrl-C.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

hack/ci/install.sh
kubectl apply --server-side -k config/samples >/dev/null
cat <<MSG

credo runs in pods of ${IMAGE} on the node credo-node:
  export KUBECONFIG=$(pwd)/bin/node.kubeconfig PATH=$(dirname "$(command -v kubectl)"):\$PATH
  kubectl -n credo-system get pods -o wide
  kubectl get trustanchors -A
  kubectl -n credo-system logs deploy/trust-controller
Ctrl-C stops the cluster and restores the machine.
MSG
