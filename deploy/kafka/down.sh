#!/usr/bin/env bash
# Stop the broker that deploy/kafka/up.sh started (SIGTERM, up to 30 s, then SIGKILL). Idempotent.
#
#   bash deploy/kafka/down.sh            # stop, keep data
#   bash deploy/kafka/down.sh --wipe     # stop and delete .data/kafka/data (same: KAFKA_WIPE=1)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BASE="${KAFKA_BASE:-$ROOT/.data/kafka}"
PIDFILE="$BASE/kafka.pid"
WIPE="${KAFKA_WIPE:-0}"
STOP_TIMEOUT="${KAFKA_STOP_TIMEOUT:-30}"
for arg in "$@"; do
  case "$arg" in
    --wipe) WIPE=1 ;;
    *) echo "usage: $0 [--wipe]" >&2; exit 2 ;;
  esac
done

say() { printf 'kafka: %s\n' "$*"; }

# Alive = exists and is not a fully exited zombie. A SIGKILLed JVM may linger as a zombie until
# its parent reaps it, and its main thread turns Z while other threads still exit (sockets open).
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  [[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]] && return 0
  (( $(ls "/proc/$1/task" 2>/dev/null | wc -l) > 1 ))
}

is_our_broker() {
  alive "$1" && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q 'kafka\.Kafka'
}

pid=""
[[ -f "$PIDFILE" ]] && pid="$(cat "$PIDFILE" 2>/dev/null || true)"
if [[ "$pid" =~ ^[0-9]+$ ]] && is_our_broker "$pid"; then
  say "stopping broker (pid $pid)..."
  kill -TERM "$pid" 2>/dev/null || true
  start=$SECONDS
  while alive "$pid" && (( SECONDS - start < STOP_TIMEOUT )); do sleep 0.5; done
  if alive "$pid"; then
    say "still running after ${STOP_TIMEOUT}s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    while alive "$pid"; do sleep 0.2; done
  fi
  say "stopped after $((SECONDS - start))s"
else
  say "not running"
fi
rm -f "$PIDFILE"

if [[ "$WIPE" == 1 ]]; then
  rm -rf "$BASE/data" "$BASE/server.properties" "$BASE/security"
  say "wiped $BASE/data (the next up starts with an empty cluster)"
fi
