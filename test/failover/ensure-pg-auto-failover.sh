#!/usr/bin/env bash
# The failover test needs pg_auto_failover for PostgreSQL 15 (Debian's
# postgresql-15-auto-failover: pg_autoctl and the monitor's extension). Installs it when missing,
# as root through apt-get; prints what it does, since an install takes a while.
set -euo pipefail
if command -v pg_autoctl >/dev/null 2>&1 && [ -x /usr/lib/postgresql/15/bin/postgres ] &&
  [ -f /usr/share/postgresql/15/extension/pgautofailover.control ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "failover test: pg_auto_failover is missing; install postgresql-15-auto-failover (needs root)" >&2
  exit 1
fi
echo "failover test: installing postgresql-15-auto-failover with apt-get"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends postgresql-15-auto-failover >/dev/null
echo "failover test: pg_auto_failover installed ($(pg_autoctl --version | head -1))"
