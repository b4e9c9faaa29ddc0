# Sourced by the install scripts (hack/engines/install.sh, hack/node/install.sh):
# apt_install installs the Debian packages given that are missing, running
# `apt-get update` only when one is, as root or through sudo. It sets SUDO
# (an array: empty as root, (sudo) otherwise) for the caller's own commands,
# and logs through the caller's log function.

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

apt_install() { # package...
  local missing=() p
  for p in "$@"; do
    installed "$p" || missing+=("$p")
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    log "all present: $*"
    return
  fi
  log "installing: ${missing[*]}"
  "${SUDO[@]}" apt-get update -q
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}"
}
