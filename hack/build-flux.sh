#!/usr/bin/env bash
# Builds the Flux controllers and the flux CLI that credo's tests, `make dev` and the
# local e2e run beside it, from source through the Go module proxy, like
# hack/build-control-plane.sh builds Kubernetes.
#
# `go install module@version` is refused for them: their go.mod files replace ./api
# with a local path. They are built from one wrapper module (setup_module) that
# requires each controller and its published api module at the chosen version, with
# their own replaces, so that the dependencies they share are compiled once.
#
# The binaries go to the same cache as the control plane and are rebuilt only when
# missing or of another version (read back with `go version -m`), so a second run is
# instant. A cold build of all five takes about nine minutes on two cores.
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

# module_dir module version: the module's directory in the module cache (downloaded).
module_dir() {
  local info
  info="$(cd "$WORK" && GOFLAGS=-mod=mod go mod download -json "$1@$2")"
  sed -n 's/.*"Dir": "\(.*\)".*/\1/p' <<<"$info"
}

# replaces gomod: the module's replace directives that name a module, not a path
# (each controller replaces ./api, which the published api module stands in for), as
# "old=new@version" lines, one directive a line whether written alone or in a block.
replaces() {
  awk '
    /^replace \($/ { block = 1; next }
    block && /^\)$/ { block = 0; next }
    /^replace / { sub(/^replace /, ""); line = 1 }
    block || line {
      line = 0
      if ($2 == "=>" && NF == 4) print $1 "=" $3 "@" $4
      else if (NF == 5 && $3 == "=>") print $1 "=" $4 "@" $5
    }' "$1"
}

# setup_module: one wrapper module, $WORK, that builds every controller and the CLI.
# It starts from the flux CLI's go.mod (whose release pins the controllers' APIs),
# requires each controller and its published api module at the chosen version, and
# takes the union of their replaces (the greater version where two disagree). Minimal
# version selection then gives one version of each shared dependency (client-go,
# controller-runtime, helm, the cloud SDKs), so a cold build compiles it once, not once per
# controller: about half the time of five separate builds on two cores.
setup_module() {
  [[ -f "$WORK/.ready" ]] && return 0
  rm -rf "$WORK" && mkdir -p "$WORK"
  local cli dir name version module
  cli="$(module_dir github.com/fluxcd/flux2/v2 "$FLUX_VERSION")"
  [[ -f "$cli/go.mod" ]] || { log "flux2@$FLUX_VERSION: no go.mod in $cli"; exit 1; }
  # cmd/flux embeds the release's install manifests, which its release process
  # generates and the module zip does not carry. credo never runs `flux install`:
  # a placeholder satisfies the embed, in a writable copy of the module.
  cp -r "$cli" "$WORK/src" && chmod -R u+w "$WORK/src"
  mkdir -p "$WORK/src/cmd/flux/manifests"
  echo "# placeholder: credo's build of the flux CLI carries no install manifests" >"$WORK/src/cmd/flux/manifests/placeholder.yaml"
  cp "$WORK/src/go.mod" "$WORK/go.mod" && cat "$WORK/src/go.sum" >"$WORK/go.sum.all"
  local edits=(-module credo.dev/flux-build/all -require "github.com/fluxcd/flux2/v2@$FLUX_VERSION" -replace "github.com/fluxcd/flux2/v2=./src")
  : >"$WORK/replaces"
  for name in "${CONTROLLERS[@]}"; do
    version="$(controller_version "$name")" module="github.com/fluxcd/$name"
    dir="$(module_dir "$module" "$version")"
    [[ -f "$dir/go.mod" ]] || { log "$module@$version: no go.mod in $dir"; exit 1; }
    edits+=(-require "$module@$version" -require "$module/api@$version")
    replaces "$dir/go.mod" >>"$WORK/replaces"
    [[ -f "$dir/go.sum" ]] && cat "$dir/go.sum" >>"$WORK/go.sum.all"
  done
  # v0.18.3 of fluxcd/pkg/artifact, which source-controller v1.9.6 asks for, is refused
  # by the proxy; a replace (not a require, which MVS would raise again) holds v0.18.1.
  echo "github.com/fluxcd/pkg/artifact=github.com/fluxcd/pkg/artifact@v0.18.1" >>"$WORK/replaces"
  local old last=""
  while IFS='=' read -r old new; do
    [[ "$old" == "$last" ]] && continue # sorted by version, greatest first: keep that one
    last="$old"
    edits+=(-replace "$old=$new")
  done < <(sort -t@ -k1,1 -k2,2Vr "$WORK/replaces")
  sort -u "$WORK/go.sum.all" >"$WORK/go.sum" && rm "$WORK/go.sum.all"
  chmod u+w "$WORK"/go.*
  (cd "$WORK" && go mod edit "${edits[@]}")
  touch "$WORK/.ready"
}

controller_version() {
  case "$1" in
  source-controller) echo "$SOURCE_CONTROLLER_VERSION" ;;
  helm-controller) echo "$HELM_CONTROLLER_VERSION" ;;
  kustomize-controller) echo "$KUSTOMIZE_CONTROLLER_VERSION" ;;
  notification-controller) echo "$NOTIFICATION_CONTROLLER_VERSION" ;;
  esac
}

# build name ldflags package...: the packages into $OUT, from the wrapper module.
build() {
  local name="$1" ldflags="$2" last
  shift 2
  last="$(progress_last "$name")"
  log "go build $name${last:- (a cold build takes minutes)}"
  rm -rf "$OUT/.new" && mkdir -p "$OUT/.new"
  (cd "$WORK" && GOFLAGS=-mod=mod CGO_ENABLED=0 progress "$name" \
    go build -trimpath -ldflags "$ldflags" -o "$OUT/.new/" "$@")
  mv -f "$OUT"/.new/* "$OUT/" && rmdir "$OUT/.new"
}

controllers() { # name...: build the controllers missing or of another version, in one go build
  local missing=() name
  for name in "$@"; do
    has_module "$name" "github.com/fluxcd/$name" "$(controller_version "$name")" || missing+=("$name")
  done
  [[ ${#missing[@]} -gt 0 ]] || return 0
  setup_module
  local pkgs=()
  for name in "${missing[@]}"; do pkgs+=("github.com/fluxcd/$name"); done
  build "${missing[*]}" "-s -w" "${pkgs[@]}"
  for name in "${missing[@]}"; do
    has_module "$name" "github.com/fluxcd/$name" "$(controller_version "$name")" ||
      { log "built $name does not embed github.com/fluxcd/$name $(controller_version "$name")"; exit 1; }
  done
}

flux_cli() {
  local out
  out="$("$OUT/flux" version --client 2>/dev/null)" && [[ "$out" == *"${FLUX_VERSION#v}"* ]] && return 0
  setup_module
  build flux "-s -w -X main.VERSION=${FLUX_VERSION#v}" github.com/fluxcd/flux2/v2/cmd/flux
  # The replace makes the module's version "(devel)" in the binary: check the flag instead.
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
  local dir
  mkdir -p "$OUT/rbac"
  dir="$(module_dir "$module" "$FLUX_VERSION")"
  cp "$dir/manifests/rbac/view.yaml" "$dir/manifests/rbac/edit.yaml" "$OUT/rbac/"
  chmod u+w "$OUT"/rbac/*.yaml
  echo "$FLUX_VERSION" >"$OUT/rbac/VERSION"
}

CONTROLLERS=(source-controller helm-controller kustomize-controller notification-controller)
WORK="$CACHE_ROOT/build/flux-all-$FLUX_VERSION-$(for c in "${CONTROLLERS[@]}"; do printf '%s' "$(controller_version "$c")"; done | tr -d .)"
mkdir -p "$OUT" "$WORK"
components=("$@")
[[ ${#components[@]} -gt 0 ]] || components=("${CONTROLLERS[@]}" flux flux-rbac)
wanted=()
for c in "${components[@]}"; do
  case "$c" in
  source-controller | helm-controller | kustomize-controller | notification-controller) wanted+=("$c") ;;
  flux | flux-rbac) ;;
  *) log "unknown component $c"; exit 2 ;;
  esac
done
[[ ${#wanted[@]} -eq 0 ]] || controllers "${wanted[@]}"
for c in "${components[@]}"; do
  case "$c" in
  flux) flux_cli ;;
  flux-rbac) flux_rbac ;;
  esac
done

echo "$OUT"
