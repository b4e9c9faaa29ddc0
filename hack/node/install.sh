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

# shellcheck source=../lib/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/apt.sh"
apt_install "${PACKAGES[@]}"
"${SUDO[@]}" service containerd stop >/dev/null 2>&1 || true

for b in containerd ctr runc iptables ip6tables; do
  command -v "$b" >/dev/null 2>&1 || { log "missing after install: $b"; exit 1; }
done
for p in bridge host-local portmap loopback; do
  [[ -x "/usr/lib/cni/$p" ]] || { log "missing after install: /usr/lib/cni/$p"; exit 1; }
done
