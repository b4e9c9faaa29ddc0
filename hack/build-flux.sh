#!/usr/bin/env bash
# Builds the Flux controllers and the flux CLI that credo's tests, `make dev` and the
# local e2e run beside it, from source through the Go module proxy, like
# hack/build-control-plane.sh builds Kubernetes.
#
# `go install module@version` is refused for them: their go.mod files replace ./api
# with a local path. Each is built from a wrapper module that starts from the
# controller's own go.mod and go.sum (so its pins and replaces hold), drops the ./api
# replace and requires the published api module at the same version instead.
#
# The binaries go to the same cache as the control plane and are rebuilt only when
# missing or of another version (read back with `go version -m`), so a second run is
# instant. A cold build takes about three to four minutes per component on two cores.
#
# Usage: hack/build-flux.sh [component...]   # prints the directory holding the binaries
set -euo pipefail

SOURCE_CONTROLLER_VERSION="${SOURCE_CONTROLLER_VERSION:-v1.9.6}"
HELM_CONTROLLER_VERSION="${HELM_CONTROLLER_VERSION:-v1.6.4}"
KUSTOMIZE_CONTROLLER_VERSION="${KUSTOMIZE_CONTROLLER_VERSION:-v1.9.6}"
NOTIFICATION_CONTROLLER_VERSION="${NOTIFICATION_CONTROLLER_VERSION:-v1.9.3}"
FLUX_VERSION="${FLUX_VERSION:-v2.9.5}"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/credo"
OUT="${CREDO_FLUX_ASSETS:-$CACHE_ROOT/flux}"

log() { echo "build-flux: $*" >&2; }
PROGRESS_PREFIX="build-flux: "
# shellcheck source=hack/progress.sh
source "$(dirname "$0")/progress.sh"

# has_module binary module version: the binary embeds module at exactly version.
has_module() {
  local out
  [[ -x "$OUT/$1" ]] && out="$(go version -m "$OUT/$1" 2>/dev/null)" &&
    [[ "$(awk -v m="$2" -v v="$3" '($1 == "dep" || $1 == "mod") && $2 == m && $3 == v {print "yes"}' <<<"$out")" == yes ]]
}

# wrapper work module version [go mod edit flags...]: a module in work that builds
# module@version's root package with the controller's own requirements.
wrapper() {
  local work="$1" module="$2" version="$3"
  shift 3
  rm -rf "$work" && mkdir -p "$work"
  local info dir
  info="$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "$module@$version")"
  dir="$(sed -n 's/.*"Dir": "\(.*\)".*/\1/p' <<<"$info")"
  [[ -f "$dir/go.mod" ]] || { log "$module@$version: no go.mod in $dir"; exit 1; }
  cp "$dir/go.mod" "$work/go.mod"
  [[ -f "$dir/go.sum" ]] && cp "$dir/go.sum" "$work/go.sum"
  chmod u+w "$work"/go.*
  (cd "$work" && go mod edit -module "credo.dev/flux-build/$(basename "$work")" \
    -dropreplace "$module/api" -require "$module@$version" -require "$module/api@$version" "$@")
  printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$module" >"$work/tools.go"
}

build() { # name package work
  local last
  last="$(progress_last "$1")"
  log "go build $1${last:- (a cold build takes minutes)}"
  (cd "$3" && GOFLAGS=-mod=mod CGO_ENABLED=0 progress "$1" \
    go build -trimpath -ldflags "${LDFLAGS:--s -w}" -o "$OUT/$1.new" "$2")
  mv -f "$OUT/$1.new" "$OUT/$1"
}

controller() { # name version [go mod edit flags...]
  local name="$1" version="$2" module="github.com/fluxcd/$1"
  shift 2
  has_module "$name" "$module" "$version" && return 0
  local work="$CACHE_ROOT/build/$name-$version"
  wrapper "$work" "$module" "$version" "$@"
  build "$name" "$module" "$work"
  has_module "$name" "$module" "$version" || { log "built $name does not embed $module $version"; exit 1; }
}

flux_cli() {
  local module=github.com/fluxcd/flux2/v2
  has_module flux "$module" "$FLUX_VERSION" && return 0
  local work="$CACHE_ROOT/build/flux-$FLUX_VERSION"
  rm -rf "$work" && mkdir -p "$work"
  local info dir
  info="$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "$module@$FLUX_VERSION")"
  dir="$(sed -n 's/.*"Dir": "\(.*\)".*/\1/p' <<<"$info")"
  # cmd/flux embeds the release's install manifests, which its release process
  # generates and the module zip does not carry. credo never runs `flux install`:
  # a placeholder satisfies the embed, in a writable copy of the module.
  cp -r "$dir" "$work/src" && chmod -R u+w "$work/src"
  mkdir -p "$work/src/cmd/flux/manifests"
  echo "# placeholder: credo's build of the flux CLI carries no install manifests" >"$work/src/cmd/flux/manifests/placeholder.yaml"
  cp "$work/src/go.mod" "$work/go.mod" && cp "$work/src/go.sum" "$work/go.sum"
  (cd "$work" && go mod edit -module credo.dev/flux-build/flux -require "$module@$FLUX_VERSION" -replace "$module=./src")
  printf '//go:build tools\n\npackage tools\n\nimport _ "%s/cmd/flux"\n' "$module" >"$work/tools.go"
  LDFLAGS="-s -w -X main.VERSION=${FLUX_VERSION#v}" build flux "$module/cmd/flux" "$work"
  # The replace makes the module's version "(devel)" in the binary: check the flag instead.
  local out
  out="$("$OUT/flux" version --client 2>/dev/null)" && [[ "$out" == *"${FLUX_VERSION#v}"* ]] ||
    { log "built flux does not report $FLUX_VERSION"; exit 1; }
}

# flux_rbac copies Flux's own tenant roles, flux-view and flux-edit (aggregated
# into the built-in view, edit and admin), from the flux2 module of the CLI's
# version into $OUT/rbac: make dev and the tests bind tenants to them as a
# platform that installs Flux does.
flux_rbac() {
  local module=github.com/fluxcd/flux2/v2
  [[ "$(cat "$OUT/rbac/VERSION" 2>/dev/null)" == "$FLUX_VERSION" ]] && return 0
  local work="$CACHE_ROOT/build/flux-rbac" info dir
  mkdir -p "$work" "$OUT/rbac"
  info="$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "$module@$FLUX_VERSION")"
  dir="$(sed -n 's/.*"Dir": "\(.*\)".*/\1/p' <<<"$info")"
  cp "$dir/manifests/rbac/view.yaml" "$dir/manifests/rbac/edit.yaml" "$OUT/rbac/"
  chmod u+w "$OUT"/rbac/*.yaml
  echo "$FLUX_VERSION" >"$OUT/rbac/VERSION"
}

mkdir -p "$OUT"
components=("$@")
[[ ${#components[@]} -gt 0 ]] || components=(source-controller helm-controller kustomize-controller notification-controller flux flux-rbac)
for c in "${components[@]}"; do
  case "$c" in
  source-controller)
    # v0.18.3 of fluxcd/pkg/artifact, which v1.9.6 asks for, is refused by the
    # proxy; a replace (not a require, which MVS would raise again) holds v0.18.1.
    controller source-controller "$SOURCE_CONTROLLER_VERSION" -replace github.com/fluxcd/pkg/artifact=github.com/fluxcd/pkg/artifact@v0.18.1 ;;
  helm-controller) controller helm-controller "$HELM_CONTROLLER_VERSION" ;;
  kustomize-controller) controller kustomize-controller "$KUSTOMIZE_CONTROLLER_VERSION" ;;
  notification-controller) controller notification-controller "$NOTIFICATION_CONTROLLER_VERSION" ;;
  flux) flux_cli ;;
  flux-rbac) flux_rbac ;;
  *) log "unknown component $c"; exit 2 ;;
  esac
done

echo "$OUT"
