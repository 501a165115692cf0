#!/usr/bin/env bash
# Start the local PostgreSQL of the read side, idempotently: a cluster of its own under .data/,
# listening on the loopback only, on a port of its own.
#
#   bash deploy/postgres/up.sh        # prints the DATABASE_URL to use
#
# Env: PG_PORT (15432), PG_BASE (.data/postgres), PG_BIN (the newest /usr/lib/postgresql/*/bin).
# Needs Debian's PostgreSQL server (`apt-get install postgresql`; 15 is what this was tried with).
# As root the server runs as the `postgres` user (PostgreSQL refuses to run as root).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BASE="${PG_BASE:-$ROOT/.data/postgres}"
PORT="${PG_PORT:-15432}"
DATA="$BASE/data"
LOG="$BASE/server.log"
URL="postgresql+psycopg://croupier@127.0.0.1:$PORT/croupier"

say() { printf 'postgres: %s\n' "$*"; }
die() { printf 'postgres: error: %s\n' "$*" >&2; exit 1; }

BIN="${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}"
[[ -n "$BIN" && -x "$BIN/initdb" ]] || die "no PostgreSQL server found; install it (apt-get install postgresql) or set PG_BIN"

as_owner() {
  if [[ "$(id -u)" = 0 ]]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

mkdir -p "$BASE"
if [[ "$(id -u)" = 0 ]]; then
  chown postgres: "$BASE"
  if ! (cd / && runuser -u postgres -- test -w "$BASE") 2>/dev/null; then
    # A checkout the postgres user cannot reach (root's private directory, e.g. one made by
    # mktemp -d): the cluster lives in a directory of its own, linked from .data/postgres.
    REAL="/var/tmp/croupier-postgres-$(printf '%s' "$BASE" | sha1sum | cut -c1-12)"
    mkdir -p "$REAL" && chown postgres: "$REAL" && chmod 700 "$REAL"
    if [[ ! -L "$BASE" ]]; then rm -rf "$BASE"; fi
    ln -sfn "$REAL" "$BASE"
    say "the postgres user cannot reach $BASE: the cluster lives in $REAL, linked from there"
    BASE="$REAL"
    DATA="$BASE/data"
    LOG="$BASE/server.log"
  fi
fi

running() { as_owner "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; }
if ! running && (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
  die "port $PORT on 127.0.0.1 is taken by a process this script did not start ('ss -ltnp | grep :$PORT': another checkout's cluster, say); stop it, or set PG_PORT"
fi

if [[ ! -f "$DATA/PG_VERSION" ]]; then
  say "initdb in $DATA"
  as_owner "$BIN/initdb" -D "$DATA" -U croupier --auth=trust -E UTF8 --locale=C.UTF-8 >"$BASE/initdb.log" 2>&1 \
    || die "initdb failed; see $BASE/initdb.log"
  cat >>"$DATA/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$BASE'
shared_buffers = 256MB
max_connections = 100
synchronous_commit = on
fsync = on
CONF
fi

if running; then
  say "already running on 127.0.0.1:$PORT"
else
  as_owner "$BIN/pg_ctl" -D "$DATA" -l "$LOG" -o "-p $PORT" -w -t 60 start >/dev/null \
    || die "the server did not start; see $LOG"
  say "started on 127.0.0.1:$PORT"
fi

if ! as_owner "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U croupier -d postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname = 'croupier'" | grep -q 1; then
  as_owner "$BIN/createdb" -h 127.0.0.1 -p "$PORT" -U croupier croupier
fi
say "DATABASE_URL=$URL"
