#!/usr/bin/env bash
# Builds the local Kubernetes control plane credo is tested against, from source,
# through the Go module proxy: etcd, kube-apiserver, kube-controller-manager and kubectl.
#
# No container engine, image registry or download site is needed. The binaries go
# to a cache outside the clone and are rebuilt only when missing or of the wrong
# version, so a second run is instant.
#
# Usage: hack/build-control-plane.sh        # prints the directory holding the binaries
#        hack/build-control-plane.sh node   # also kubelet, kube-scheduler and kube-proxy
#                                           # (or CREDO_NODE=1), for a real node (issue 31)
set -euo pipefail

NODE="${CREDO_NODE:-}"
[[ "${1:-}" == node ]] && NODE=1

K8S_VERSION="${K8S_VERSION:-v1.37.2}"
ETCD_VERSION="${ETCD_VERSION:-v3.7.3}"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/credo"
OUT="${CREDO_K8S_ASSETS:-$CACHE_ROOT/k8s/$K8S_VERSION}"
STAGING_VERSION="v0.${K8S_VERSION#v1.}"

log() { echo "build-control-plane: $*" >&2; }
PROGRESS_PREFIX="build-control-plane: "
# shellcheck source=hack/progress.sh
source "$(dirname "$0")/progress.sh"

# Each check captures the whole output before matching: `cmd | grep -q` under
# pipefail fails at random when grep exits first and cmd dies of SIGPIPE.
has_version() { # binary, expected substring
  local out
  [[ -x "$OUT/$1" ]] && out="$("$OUT/$1" --version 2>/dev/null)" && [[ "$out" == *"$2"* ]]
}

kube_ok() {
  local out
  has_version kube-apiserver "$K8S_VERSION" &&
    has_version kube-controller-manager "$K8S_VERSION" &&
    [[ -x "$OUT/kubectl" ]] && out="$("$OUT/kubectl" version --client 2>/dev/null)" && [[ "$out" == *"$K8S_VERSION"* ]]
}

etcd_ok() { has_version etcd "${ETCD_VERSION#v}"; }

# The node's binaries are built only when asked, so the control plane's cold build
# does not grow for tests that run no node.
node_ok() {
  [[ -z "$NODE" ]] || {
    has_version kubelet "$K8S_VERSION" &&
      has_version kube-scheduler "$K8S_VERSION" &&
      has_version kube-proxy "$K8S_VERSION"
  }
}

mkdir -p "$OUT"

if ! kube_ok || ! node_ok; then
  log "building Kubernetes $K8S_VERSION into $OUT (a cold build takes several minutes)"
  work="$CACHE_ROOT/build/kubernetes-$K8S_VERSION"
  mkdir -p "$work"
  # kubernetes' own go.mod replaces its staging modules with local paths, which the
  # module proxy does not carry; point each of them at its published version instead.
  gomod="$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  staging="$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9.-]*\) => ./staging/.*#\1#p' "$gomod" | sort -u)"
  [[ -n "$staging" ]] || { log "no staging replaces found in $gomod"; exit 1; }
  {
    echo "module credo.dev/controlplane-build"
    echo
    echo "go $(sed -n 's/^go \([0-9.]*\)$/\1/p' "$gomod")"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    for m in $staging; do echo "replace $m => $m $STAGING_VERSION"; done
  } >"$work/go.mod"
  cmds="kube-apiserver kube-controller-manager kubectl"
  [[ -z "$NODE" ]] || cmds+=" kubelet kube-scheduler kube-proxy"
  {
    printf '//go:build tools\n\npackage tools\n\nimport (\n'
    for cmd in $cmds; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$cmd"; done
    printf ')\n'
  } >"$work/tools.go"
  log "resolving the modules of Kubernetes $K8S_VERSION$(progress_last "kubernetes modules")"
  (cd "$work" && GOFLAGS=-mod=mod progress "kubernetes modules" bash -c \
    "{ go mod tidy -e >/dev/null 2>&1 || true; } && go get k8s.io/kubernetes@$K8S_VERSION >/dev/null")
  minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
  ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  for cmd in $cmds; do
    # A warm cache holds the right binary already; only the missing ones are built.
    if [[ "$cmd" == kubectl ]]; then
      out="$("$OUT/kubectl" version --client 2>/dev/null || true)"
      [[ "$out" == *"$K8S_VERSION"* ]] && continue
    elif has_version "$cmd" "$K8S_VERSION"; then
      continue
    fi
    log "go build $cmd$(progress_last "$cmd")"
    (cd "$work" && GOFLAGS=-mod=mod CGO_ENABLED=0 progress "$cmd" \
      go build -trimpath -ldflags "$ldflags" -o "$OUT/$cmd.new" "k8s.io/kubernetes/cmd/$cmd")
    mv -f "$OUT/$cmd.new" "$OUT/$cmd"
  done
  { kube_ok && node_ok; } || { log "built binaries do not report $K8S_VERSION"; exit 1; }
fi

if ! etcd_ok; then
  log "building etcd $ETCD_VERSION into $OUT"
  work="$CACHE_ROOT/build/etcd-$ETCD_VERSION"
  mkdir -p "$work"
  cat >"$work/go.mod" <<GOMOD
module credo.dev/etcd-build

go 1.25

require (
	go.etcd.io/etcd/api/v3 $ETCD_VERSION
	go.etcd.io/etcd/client/pkg/v3 $ETCD_VERSION
	go.etcd.io/etcd/client/v3 $ETCD_VERSION
	go.etcd.io/etcd/pkg/v3 $ETCD_VERSION
	go.etcd.io/etcd/server/v3 $ETCD_VERSION
)
GOMOD
  cat >"$work/tools.go" <<'GO'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
GO
  (cd "$work" && GOFLAGS=-mod=mod go mod tidy -e >/dev/null 2>&1 || true)
  # Build beside the target and rename, so a running etcd is never overwritten.
  log "go build etcd$(progress_last etcd)"
  (cd "$work" && GOFLAGS=-mod=mod CGO_ENABLED=0 progress etcd go build -trimpath -o "$OUT/etcd.new" go.etcd.io/etcd/server/v3)
  mv -f "$OUT/etcd.new" "$OUT/etcd"
  etcd_ok || { log "built etcd does not report $ETCD_VERSION"; exit 1; }
fi

echo "$OUT"
