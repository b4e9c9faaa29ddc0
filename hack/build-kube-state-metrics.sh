#!/usr/bin/env bash
# Builds kube-state-metrics from the Go module proxy, in a module of its own
# (credo's go.mod is never touched), into a cache outside the clone. A second
# run is instant. `make test-monitoring` uses it to validate the
# CustomResourceState config in config/monitoring against the local control plane.
#
# Usage: hack/build-kube-state-metrics.sh   # prints the path of the binary
set -euo pipefail

# v2.18.0: the newest release the module proxy serves (v2.17.0 and v2.19.0 are refused).
KSM_VERSION="${KSM_VERSION:-v2.18.0}"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/credo"
OUT="${CREDO_KSM_DIR:-$CACHE_ROOT/kube-state-metrics/$KSM_VERSION}"
BIN="$OUT/kube-state-metrics"

log() { echo "build-kube-state-metrics: $*" >&2; }

ksm_ok() {
  local out
  [[ -x "$BIN" ]] && out="$(go version -m "$BIN" 2>/dev/null)" &&
    [[ "$out" == *"k8s.io/kube-state-metrics/v2"*"$KSM_VERSION"* ]]
}

if ! ksm_ok; then
  log "building kube-state-metrics $KSM_VERSION into $OUT (a cold build takes a few minutes)"
  mkdir -p "$OUT"
  work="$CACHE_ROOT/build/kube-state-metrics-$KSM_VERSION"
  mkdir -p "$work"
  cat >"$work/go.mod" <<GOMOD
module credo.dev/kube-state-metrics-build

go 1.24

require k8s.io/kube-state-metrics/v2 $KSM_VERSION
GOMOD
  cat >"$work/tools.go" <<'GO'
//go:build tools

package tools

import _ "k8s.io/kube-state-metrics/v2"
GO
  # Its own go.mod pins its dependencies; take them as they are.
  (cd "$work" && GOFLAGS=-mod=mod go mod tidy -e >/dev/null 2>&1 || true)
  # Build beside the target and rename, so a running binary is never overwritten.
  (cd "$work" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -o "$BIN.new.$$" k8s.io/kube-state-metrics/v2)
  mv -f "$BIN.new.$$" "$BIN"
  ksm_ok || { log "built binary does not report k8s.io/kube-state-metrics/v2 $KSM_VERSION"; exit 1; }
fi

echo "$BIN"
