#!/usr/bin/env bash
# Builds step-ca (github.com/smallstep/certificates) from the Go module proxy, static
# (CGO_ENABLED=0), for the benchmark that runs it beside credo's enrollment
# (tests/bench/stepca_test.go, `make bench-stepca`).
#
# Its go.mod replaces nothing, so `go install module@version` builds it as released,
# in no module of ours (credo's go.mod is never touched). The binary goes to a cache
# outside the clone and is rebuilt only when missing or of another version (read back
# with `go version -m`), so a second run is instant. A cold build (an empty build
# cache) takes about a minute and a half on two cores.
#
# Usage: hack/build-stepca.sh   # prints the directory holding step-ca
set -euo pipefail

STEPCA_VERSION="${STEPCA_VERSION:-v0.30.2}"
MODULE=github.com/smallstep/certificates
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/credo"
OUT="$CACHE_ROOT/stepca"

log() { echo "build-stepca: $*" >&2; }
PROGRESS_PREFIX="build-stepca: "
# shellcheck source=hack/progress.sh
source "$(dirname "$0")/progress.sh"

# stepca_ok: step-ca is there and embeds the module at exactly STEPCA_VERSION. The
# output is captured whole before matching (`cmd | grep -q` under pipefail fails when
# grep exits first).
stepca_ok() {
  local out
  [[ -x "$OUT/step-ca" ]] && out="$(go version -m "$OUT/step-ca" 2>/dev/null)" &&
    [[ "$(awk -v m="$MODULE" -v v="$STEPCA_VERSION" '$1 == "mod" && $2 == m && $3 == v {print "yes"}' <<<"$out")" == yes ]]
}

if ! stepca_ok; then
  log "go install step-ca $STEPCA_VERSION into $OUT$(progress_last step-ca)"
  # Installed beside the target and renamed, so a running step-ca is never overwritten.
  # GOFLAGS is set whole: a -mod flag from the caller would be refused for module@version.
  rm -rf "$OUT/.new" && mkdir -p "$OUT/.new"
  GOBIN="$OUT/.new" GOFLAGS=-trimpath CGO_ENABLED=0 progress step-ca \
    go install -ldflags "-s -w -X main.Version=${STEPCA_VERSION#v}" "$MODULE/cmd/step-ca@$STEPCA_VERSION"
  mv -f "$OUT/.new/step-ca" "$OUT/step-ca" && rmdir "$OUT/.new"
  stepca_ok || { log "built step-ca does not embed $MODULE $STEPCA_VERSION"; exit 1; }
fi

echo "$OUT"
