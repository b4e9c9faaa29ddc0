#!/usr/bin/env bash
# Progress of a long build step, on stderr: while the step runs, a line every
# 30 seconds ("still building kube-apiserver (3m12s, last time 6m04s)"), and one when it
# ends. Each step's duration is kept in the cache, so the next cold build says how long
# the last one took; a step that ends within 30 seconds (nothing to build) prints
# nothing and keeps the duration it had.
#
# Usage, as a command:  hack/progress.sh NAME COMMAND [ARG...]
#        sourced:       PROGRESS_PREFIX="build-flux: " source hack/progress.sh
#                       progress NAME COMMAND [ARG...]
#                       progress_last NAME   # " (last time 6m04s)", or nothing
#
# PROGRESS_EVERY (seconds, default 30) sets the interval of the "still building" lines.

PROGRESS_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/credo/durations"
PROGRESS_EVERY="${PROGRESS_EVERY:-30}"
PROGRESS_PREFIX="${PROGRESS_PREFIX:-}"

# progress_duration SECONDS: 45s, 6m04s.
progress_duration() {
  if (($1 < 60)); then printf '%ds' "$1"; else printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); fi
}

progress_file() { echo "$PROGRESS_DIR/${1//[^A-Za-z0-9._-]/_}"; }

# progress_last NAME: " (last time 6m04s)" when a duration of NAME is kept.
progress_last() {
  local f s
  f="$(progress_file "$1")"
  [[ -r "$f" ]] && s="$(<"$f")" && [[ "$s" =~ ^[0-9]+$ ]] && printf ' (last time %s)' "$(progress_duration "$s")"
  return 0
}

# progress NAME COMMAND [ARG...]: runs the command, reporting on stderr, and
# returns its status.
progress() {
  local name="$1" start ticker rc=0 last
  shift
  start="$(date +%s)"
  last="$(progress_last "$name")"
  last="${last# (}"
  last="${last%)}"
  (
    # The sleep is killed with the ticker: a leftover sleep would hold the caller's
    # stdout open, and $(...) around the build would wait for it.
    local nap=""
    trap 'kill "$nap" 2>/dev/null; exit 0' TERM
    while :; do
      sleep "$PROGRESS_EVERY" &
      nap=$!
      wait "$nap"
      echo "${PROGRESS_PREFIX}still building $name ($(progress_duration $(($(date +%s) - start)))${last:+, $last})" >&2
    done
  ) &
  ticker=$!
  "$@" || rc=$?
  kill "$ticker" 2>/dev/null
  wait "$ticker" 2>/dev/null || true
  local took=$(($(date +%s) - start))
  if ((rc == 0 && took >= PROGRESS_EVERY)); then
    mkdir -p "$PROGRESS_DIR" && echo "$took" >"$(progress_file "$name")"
    echo "${PROGRESS_PREFIX}built $name in $(progress_duration "$took")" >&2
  fi
  return "$rc"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  [[ $# -ge 2 ]] || { echo "usage: $0 NAME COMMAND [ARG...]" >&2; exit 2; }
  progress "$@"
fi
