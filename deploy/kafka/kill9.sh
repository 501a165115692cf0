#!/usr/bin/env bash
# Crash the broker started by deploy/kafka/up.sh: SIGKILL, no clean shutdown, data left as is.
# For fault tests; 'bash deploy/kafka/up.sh' afterwards recovers from the unclean log.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PIDFILE="${KAFKA_BASE:-$(cd "$HERE/../.." && pwd)/.data/kafka}/kafka.pid"

# Alive = exists and is not a fully exited zombie. A SIGKILLed JVM may linger as a zombie until
# its parent reaps it, and its main thread turns Z while other threads still exit (sockets open).
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  [[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]] && return 0
  (( $(ls "/proc/$1/task" 2>/dev/null | wc -l) > 1 ))
}

pid=""
[[ -f "$PIDFILE" ]] && pid="$(cat "$PIDFILE" 2>/dev/null || true)"
if [[ "$pid" =~ ^[0-9]+$ ]] && alive "$pid" \
   && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'kafka\.Kafka'; then
  kill -KILL "$pid"
  while alive "$pid"; do sleep 0.1; done
  echo "kafka: killed broker (pid $pid) with SIGKILL; data kept"
else
  echo "kafka: not running"
fi
rm -f "$PIDFILE"
