#!/usr/bin/env bash
# Installs what the node of tests/node runs on, from Debian's packages:
# containerd (1.6, with its CRI plugin), runc, the CNI plugins (bridge,
# host-local, portmap, loopback in /usr/lib/cni), iptables (kube-proxy and
# the bridge plugin's masquerading) and conntrack. kubelet, kube-scheduler
# and kube-proxy are built from source (hack/build-control-plane.sh node).
#
# Idempotent: only missing packages are installed, and `apt-get update` runs
# only when something is missing. Runs as root, or through sudo. A containerd
# service a maintainer script started is stopped: the node runs its own
# containerd from a private configuration and socket.
#
# Usage: hack/node/install.sh
set -euo pipefail

PACKAGES=(containerd runc containernetworking-plugins iptables conntrack)

log() { echo "node/install: $*" >&2; }

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    log "not root and no sudo: cannot install packages"
    exit 1
  fi
fi

installed() { # package
  [[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true)" == "installed" ]]
}

missing=()
for p in "${PACKAGES[@]}"; do
  installed "$p" || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  log "all present: ${PACKAGES[*]}"
else
  log "installing: ${missing[*]}"
  "${SUDO[@]}" apt-get update -q
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
"${SUDO[@]}" service containerd stop >/dev/null 2>&1 || true

for b in containerd ctr runc iptables ip6tables; do
  command -v "$b" >/dev/null 2>&1 || { log "missing after install: $b"; exit 1; }
done
for p in bridge host-local portmap loopback; do
  [[ -x "/usr/lib/cni/$p" ]] || { log "missing after install: /usr/lib/cni/$p"; exit 1; }
done
