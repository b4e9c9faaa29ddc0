#!/usr/bin/env bash
# Installs what the PKCS#11 build and its tests need, from Debian's packages:
# SoftHSM2 (the token the tests keep the enrollment CA's key in:
# libsofthsm2.so and softhsm2-util) and the C compiler cgo needs to build
# github.com/miekg/pkcs11 (make build-pkcs11, make test-pkcs11).
#
# Idempotent: only missing packages are installed, and `apt-get update` runs only
# when something is missing. Runs as root, or through sudo when not root.
# Prints the path of libsofthsm2.so on stdout.
#
# Usage: hack/pkcs11/install.sh
set -euo pipefail

PACKAGES=(
  softhsm2
  gcc
  libc6-dev
)

log() { echo "pkcs11/install: $*" >&2; }

# shellcheck source=../lib/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/apt.sh"
apt_install "${PACKAGES[@]}"

for b in softhsm2-util gcc; do
  command -v "$b" >/dev/null 2>&1 || { log "missing after install: $b"; exit 1; }
done
# Debian ships the module under /usr/lib/softhsm (a link) and the multiarch directory.
for m in /usr/lib/softhsm/libsofthsm2.so /usr/lib/*-linux-gnu/softhsm/libsofthsm2.so; do
  if [[ -f "$m" ]]; then
    log "ready"
    echo "$m"
    exit 0
  fi
done
log "missing after install: libsofthsm2.so"
exit 1
