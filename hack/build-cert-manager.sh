#!/usr/bin/env bash
# Builds cert-manager's controllers (github.com/cert-manager/cert-manager), which the
# cert-manager CA of the enrollment-controller is tested against (tests/certmanager), from
# the Go module proxy, static (CGO_ENABLED=0, stripped as credo's shipped binaries are), and
# copies cert-manager's CRDs beside them, as hack/build-flux.sh builds Flux.
#
# cert-manager's controller binary has its main package in the nested module
# github.com/cert-manager/cert-manager/cmd/controller, which is never tagged: the module
# proxy serves no version of it (nor of its app package), only the main module, where every
# controller lives (pkg/controller/...). So the binary built here, cert-manager-controller,
# is hack/cert-manager/main.go, a launcher doing what cmd/controller/app does (cert-manager's
# ContextFactory, its registry of controllers, its shared informers), in a wrapper module
# that starts from cert-manager's own go.mod and requires the released module: the
# controllers that run (issuers, clusterissuers, certificaterequests-approver,
# certificaterequests-issuer-ca and -selfsigned) are cert-manager's code as released.
#
# The CRDs are the module's deploy/crds: controller-gen's output from the API types, the
# source the Helm chart's CRD templates are made from, plain YAML (no template).
#
# Everything goes to a cache outside the clone and is rebuilt only when missing, of another
# version (read back with `go version -m`) or built from another launcher (its digest is
# kept beside the binary), so a second run is instant. A cold build (empty GOCACHE and
# GOMODCACHE, downloads included) took 2m22s on two cores (hack/progress.sh keeps the last).
#
# Usage: hack/build-cert-manager.sh   # prints the directory holding the binary and crds/
set -euo pipefail

CERT_MANAGER_VERSION="${CERT_MANAGER_VERSION:-v1.21.2}"
MODULE=github.com/cert-manager/cert-manager
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/credo"
OUT="${CREDO_CERT_MANAGER_ASSETS:-$CACHE_ROOT/cert-manager}"
WORK="$CACHE_ROOT/build/cert-manager-$CERT_MANAGER_VERSION"
LAUNCHER="$(cd "$(dirname "$0")" && pwd)/cert-manager/main.go"
BINARY=cert-manager-controller

log() { echo "build-cert-manager: $*" >&2; }
PROGRESS_PREFIX="build-cert-manager: "
# shellcheck source=hack/progress.sh
source "$(dirname "$0")/progress.sh"

launcher_digest() { sha256sum "$LAUNCHER" | cut -d' ' -f1; }

# built: the binary embeds MODULE at exactly CERT_MANAGER_VERSION (a "dep" line of the
# wrapper) and was built from the launcher as it is now. The output is captured whole
# before matching (`cmd | grep -q` under pipefail fails when grep exits first).
built() {
  local out
  [[ -x "$OUT/$BINARY" ]] && out="$(go version -m "$OUT/$BINARY" 2>/dev/null)" &&
    [[ "$(awk -v m="$MODULE" -v v="$CERT_MANAGER_VERSION" '$1 == "dep" && $2 == m && $3 == v {print "yes"}' <<<"$out")" == yes ]] &&
    [[ "$(cat "$OUT/$BINARY.launcher" 2>/dev/null)" == "$(launcher_digest)" ]]
}

# module_dir: the module's directory in the module cache (downloaded).
module_dir() {
  local info
  mkdir -p "$WORK"
  info="$(cd "$WORK" && GOFLAGS=-mod=mod go mod download -json "$MODULE@$CERT_MANAGER_VERSION")"
  sed -n 's/.*"Dir": "\(.*\)".*/\1/p' <<<"$info"
}

controller() {
  built && return 0
  local dir
  dir="$(module_dir)"
  [[ -f "$dir/go.mod" ]] || { log "$MODULE@$CERT_MANAGER_VERSION: no go.mod in $dir"; exit 1; }
  rm -rf "$WORK" && mkdir -p "$WORK"
  # cert-manager's go.mod as the wrapper's (its requirements and replaces), renamed, and
  # requiring the release itself; the launcher without its ignore constraint.
  sed -e 's|^module .*|module credo.dev/cert-manager-build|' "$dir/go.mod" >"$WORK/go.mod"
  cp "$dir/go.sum" "$WORK/go.sum" && chmod u+w "$WORK"/go.*
  (cd "$WORK" && go mod edit -require "$MODULE@$CERT_MANAGER_VERSION")
  sed -e '/^\/\/go:build ignore$/d' "$LAUNCHER" >"$WORK/main.go"
  log "go build $BINARY ($MODULE $CERT_MANAGER_VERSION) into $OUT$(progress_last "$BINARY")"
  mkdir -p "$OUT"
  (cd "$WORK" && GOFLAGS=-mod=mod CGO_ENABLED=0 progress "$BINARY" \
    go build -trimpath -ldflags "-s -w" -o "$OUT/$BINARY.new" .)
  mv -f "$OUT/$BINARY.new" "$OUT/$BINARY"
  launcher_digest >"$OUT/$BINARY.launcher"
  built || { log "built $BINARY does not embed $MODULE $CERT_MANAGER_VERSION"; exit 1; }
}

# crds: the module's CRDs (Issuer, ClusterIssuer, CertificateRequest, Certificate, and
# ACME's Order and Challenge), for the tests' control plane.
crds() {
  [[ "$(cat "$OUT/crds/VERSION" 2>/dev/null)" == "$CERT_MANAGER_VERSION" ]] && return 0
  local dir
  dir="$(module_dir)"
  rm -rf "$OUT/crds" && mkdir -p "$OUT/crds"
  cp "$dir"/deploy/crds/*.yaml "$OUT/crds/"
  chmod u+w "$OUT"/crds/*.yaml
  echo "$CERT_MANAGER_VERSION" >"$OUT/crds/VERSION"
}

mkdir -p "$OUT"
controller
crds

echo "$OUT"
