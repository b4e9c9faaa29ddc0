#!/usr/bin/env bash
# Installs the database engines that tests/engines proves the verifier formats
# against: PostgreSQL 15, MariaDB and ClickHouse, servers and clients, from
# Debian's packages.
#
# Idempotent: only missing packages are installed, and `apt-get update` runs only
# when something is missing. Runs as root, or through sudo when not root.
# The packages' maintainer scripts may start system services; they are stopped
# again, because the tests start their own instances on free ports.
#
# Usage: hack/engines/install.sh
set -euo pipefail

PACKAGES=(
  postgresql
  postgresql-client
  mariadb-server
  mariadb-client
  clickhouse-server
  clickhouse-client
)
SERVICES=(postgresql mariadb mysql clickhouse-server)

log() { echo "engines/install: $*" >&2; }

# shellcheck source=../lib/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/apt.sh"
apt_install "${PACKAGES[@]}"

# Stop any service a maintainer script started; the tests run their own.
for s in "${SERVICES[@]}"; do
  "${SUDO[@]}" service "$s" stop >/dev/null 2>&1 || true
done

# The tests need these binaries; fail here, clearly, if one is absent.
need=(
  /usr/lib/postgresql/15/bin/initdb
  /usr/lib/postgresql/15/bin/postgres
  psql
  mariadb-install-db
  mariadbd
  mariadb
  clickhouse-server
  clickhouse-client
)
for b in "${need[@]}"; do
  if ! command -v "$b" >/dev/null 2>&1 && [[ ! -x "$b" ]]; then
    PATH="$PATH:/usr/sbin:/sbin" command -v "$b" >/dev/null 2>&1 || { log "missing after install: $b"; exit 1; }
  fi
done
log "ready"
