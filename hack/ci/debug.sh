#!/usr/bin/env bash
# What an operator would look at first when credo's install or its e2e run
# fails (hack/ci/install.sh and hack/ci/e2e.sh run it on error): its pods,
# their events and states, the last lines of every container (and of the
# previous one, if it restarted), and the access APIService's status. No
# Secret is read.
NAMESPACE=${NAMESPACE:-credo-system}
echo "--- failed: ${NAMESPACE}"
kubectl -n "${NAMESPACE}" get deployments,pods,pdb -o wide || true
kubectl -n "${NAMESPACE}" describe pods | grep -A12 -E '^(Name:|Events:|    State:|    Last State:)' || true
for p in $(kubectl -n "${NAMESPACE}" get pods -o name 2>/dev/null); do
  echo "--- ${p}, last lines (and of the previous container, if it restarted)"
  kubectl -n "${NAMESPACE}" logs "${p}" --tail=20 || true
  kubectl -n "${NAMESPACE}" logs "${p}" --previous --tail=20 2>/dev/null || true
done
kubectl get apiservice v1alpha1.access.credo.dev -o yaml 2>/dev/null | sed -n '/^status:/,$p' || true
