#!/usr/bin/env bash
# Builds trust-manager (github.com/cert-manager/trust-manager), the peer credo's
# trust-controller is measured against (tests/bench/trustmanager_test.go,
# `make bench-peers`), from the Go module proxy, static (CGO_ENABLED=0, stripped as
# credo's shipped binaries are), and copies its CRDs (the module's deploy/crds) beside
# it. Two binaries:
#
#   trust-manager            the release as it is: `go install module/cmd/...@version`
#                            (its go.mod replaces nothing), in no module of ours.
#   trust-manager-unlimited  the same source with one line added: its REST config gets
#                            QPS -1, no client-side rate limit. trust-manager builds its
#                            config from genericclioptions' kubeconfig flags, which
#                            leave QPS at 0, so client-go's default applies: 5 requests
#                            a second, bursts of 10, for every client of the process
#                            (the event recorder has its own bucket), and it has no
#                            flag to raise it. credo's controllers run with no
#                            client-side limit, under API Priority and Fairness; this
#                            copy is the same design without the limit, so that designs
#                            are compared. It is built from a copy of the module with
#                            the line added (checked), in a wrapper module that
#                            requires the release and replaces it with the copy.
#
# Both go to a cache outside the clone and are rebuilt only when missing or of another
# version (read back with `go version -m`), so a second run is instant. A cold build
# (an empty build cache, most dependencies already in the module cache) took 2m14s on
# two cores; the second binary reuses the first's packages and takes seconds.
#
# Usage: hack/build-trust-manager.sh   # prints the directory holding both and crds/
set -euo pipefail

TRUST_MANAGER_VERSION="${TRUST_MANAGER_VERSION:-v0.25.0}"
MODULE=github.com/cert-manager/trust-manager
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/credo"
OUT="$CACHE_ROOT/peers"
WORK="$CACHE_ROOT/build/trust-manager-unlimited-$TRUST_MANAGER_VERSION"

log() { echo "build-trust-manager: $*" >&2; }
PROGRESS_PREFIX="build-trust-manager: "
# shellcheck source=hack/progress.sh
source "$(dirname "$0")/progress.sh"

# has_module binary: the binary embeds MODULE at exactly TRUST_MANAGER_VERSION, as the
# main module (go install) or as a dependency (the wrapper, where a "=>" line follows).
# The output is captured whole before matching (`cmd | grep -q` under pipefail fails
# when grep exits first).
has_module() {
  local out
  [[ -x "$OUT/$1" ]] && out="$(go version -m "$OUT/$1" 2>/dev/null)" &&
    [[ "$(awk -v m="$MODULE" -v v="$TRUST_MANAGER_VERSION" '($1 == "mod" || $1 == "dep") && $2 == m && $3 == v {print "yes"}' <<<"$out")" == yes ]]
}

# module_dir: the module's directory in the module cache (downloaded).
module_dir() {
  local info
  mkdir -p "$WORK"
  info="$(cd "$WORK" && GOFLAGS=-mod=mod go mod download -json "$MODULE@$TRUST_MANAGER_VERSION")"
  sed -n 's/.*"Dir": "\(.*\)".*/\1/p' <<<"$info"
}

released() {
  has_module trust-manager && return 0
  log "go install trust-manager $TRUST_MANAGER_VERSION into $OUT$(progress_last trust-manager)"
  # Installed beside the target and renamed, so a running binary is never overwritten.
  # GOFLAGS is set whole: a -mod flag from the caller would be refused for module@version.
  rm -rf "$OUT/.new" && mkdir -p "$OUT/.new"
  GOBIN="$OUT/.new" GOFLAGS=-trimpath CGO_ENABLED=0 progress trust-manager \
    go install -ldflags "-s -w" "$MODULE/cmd/trust-manager@$TRUST_MANAGER_VERSION"
  mv -f "$OUT/.new/trust-manager" "$OUT/trust-manager" && rmdir "$OUT/.new"
  has_module trust-manager || { log "built trust-manager does not embed $MODULE $TRUST_MANAGER_VERSION"; exit 1; }
}

# unlimited: the copy with no client-side rate limit (see the header).
unlimited() {
  has_module trust-manager-unlimited && return 0
  local dir options=src/cmd/trust-manager/app/options/options.go
  dir="$(module_dir)"
  rm -rf "$WORK" && mkdir -p "$WORK"
  cp -r "$dir" "$WORK/src" && chmod -R u+w "$WORK/src"
  # After `o.RestConfig, err = o.kubeConfigFlags.ToRESTConfig()` and its error check,
  # in Options.Complete: the one place the process's REST config is made.
  awk '
    { print }
    /o\.RestConfig, err = o\.kubeConfigFlags\.ToRESTConfig\(\)/ { found = 1 }
    found == 1 && /^\t}$/ {
      print "\t// credo'"'"'s benchmark: no client-side rate limit (client-go'"'"'s default is 5 QPS)."
      print "\to.RestConfig.QPS = -1"
      found = 2
    }
    END { if (found != 2) exit 1 }' "$WORK/$options" >"$WORK/options.go" ||
    { log "$options: the REST config is no longer made where expected; not patched"; exit 1; }
  mv "$WORK/options.go" "$WORK/$options"
  sed -e 's|^module .*|module credo.dev/trust-manager-build|' "$WORK/src/go.mod" >"$WORK/go.mod"
  cp "$WORK/src/go.sum" "$WORK/go.sum"
  (cd "$WORK" && go mod edit -require "$MODULE@$TRUST_MANAGER_VERSION" -replace "$MODULE=./src")
  cat >"$WORK/main.go" <<'GO'
// Command trust-manager-unlimited is trust-manager's own main, built from a copy of
// its module whose REST config has no client-side rate limit.
package main

import (
	"fmt"
	"os"

	"github.com/cert-manager/trust-manager/cmd/trust-manager/app"
)

func main() {
	if err := app.NewCommand().Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}
GO
  log "go build trust-manager-unlimited $TRUST_MANAGER_VERSION into $OUT$(progress_last trust-manager-unlimited)"
  (cd "$WORK" && GOFLAGS=-mod=mod CGO_ENABLED=0 progress trust-manager-unlimited \
    go build -trimpath -ldflags "-s -w" -o "$OUT/trust-manager-unlimited.new" .)
  mv -f "$OUT/trust-manager-unlimited.new" "$OUT/trust-manager-unlimited"
  has_module trust-manager-unlimited ||
    { log "built trust-manager-unlimited does not embed $MODULE $TRUST_MANAGER_VERSION"; exit 1; }
}

# crds: the module's CRDs (Bundle, ClusterBundle), for the benchmark's control plane.
crds() {
  [[ "$(cat "$OUT/crds/VERSION" 2>/dev/null)" == "$TRUST_MANAGER_VERSION" ]] && return 0
  local dir
  dir="$(module_dir)"
  rm -rf "$OUT/crds" && mkdir -p "$OUT/crds"
  cp "$dir"/deploy/crds/*.yaml "$OUT/crds/"
  chmod u+w "$OUT"/crds/*.yaml
  echo "$TRUST_MANAGER_VERSION" >"$OUT/crds/VERSION"
}

mkdir -p "$OUT"
released
unlimited
crds

echo "$OUT"
