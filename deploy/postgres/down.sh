#!/usr/bin/env bash
# Stop the local PostgreSQL started by up.sh (PG_WIPE=1 also deletes its data).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BASE="${PG_BASE:-$ROOT/.data/postgres}"
LINK="$BASE"
if [[ -L "$BASE" ]]; then BASE="$(readlink -f "$BASE")"; fi  # the cluster up.sh put elsewhere
DATA="$BASE/data"
BIN="${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}"

as_owner() {
  if [[ "$(id -u)" = 0 ]]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

if [[ -f "$DATA/PG_VERSION" ]] && as_owner "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
  as_owner "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
  printf 'postgres: stopped\n'
else
  printf 'postgres: not running\n'
fi
if [[ "${PG_WIPE:-0}" = 1 ]]; then rm -rf "$BASE" "$LINK"; printf 'postgres: data deleted\n'; fi
