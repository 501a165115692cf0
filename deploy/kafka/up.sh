#!/usr/bin/env bash
# Start a single-node Apache Kafka (KRaft) broker for this repo, idempotently.
#
#   bash deploy/kafka/up.sh
#
# Env: KAFKA_PORT (9092), KAFKA_CONTROLLER_PORT (9093), KAFKA_HEAP_OPTS ("-Xms256m -Xmx512m"),
#      KAFKA_START_TIMEOUT (90 s), PYTHON (.venv/bin/python; used for the readiness check),
#      JAVA (java), MVN (mvn), KAFKA_BASE (.data/kafka: a second instance needs its own, and
#      other ports; the chaos suite runs one in .data/kafka-chaos on 19092/19093),
#      KAFKA_SECURITY (plaintext | scram: SASL/SCRAM-SHA-512 over TLS, ACLs, see secure.sh),
#      KAFKA_SECURITY_BASE / KAFKA_SECURITY_BOOTSTRAP (certificates, passwords and clients/*.env
#      shared by the nodes of a cluster, and the bootstrap those files name; default KAFKA_BASE
#      and this broker's address).
#      For deploy/kafka/cluster.sh (one call per node): KAFKA_PROPERTIES_IN (the config template,
#      server.properties.in), KAFKA_CLUSTER_ID (formats with this id instead of a new one),
#      KAFKA_WAIT=0 (start and return without waiting for the broker to answer).
#      KAFKA_OTHER_MODE=wipe: data formatted with the other KAFKA_SECURITY is wiped (the broker
#      stopped first) instead of refused; `croupier run` sets it for the local broker it owns.
# Jars come from Maven Central via deploy/kafka/pom.xml into .data/kafka/libs (first run only);
# data in .data/kafka/data, logs in .data/kafka/logs, pid in .data/kafka/kafka.pid.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BASE="${KAFKA_BASE:-$ROOT/.data/kafka}"
LIBS="$ROOT/.data/kafka/libs"  # shared by every instance (KAFKA_BASE)
DATA_DIR="$BASE/data"
LOGS="$BASE/logs"
PIDFILE="$BASE/kafka.pid"
PROPS="$BASE/server.properties"
KAFKA_PORT="${KAFKA_PORT:-9092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
TIMEOUT="${KAFKA_START_TIMEOUT:-90}"
JAVA="${JAVA:-java}"
MVN="${MVN:-mvn}"
BOOTSTRAP="127.0.0.1:$KAFKA_PORT"
SECURITY="${KAFKA_SECURITY:-plaintext}"
# Where the certificates, passwords and clients/*.env live, and the bootstrap the clients' files
# name: the broker's own directory and address, unless the nodes of a cluster share them
# (deploy/kafka/cluster.sh sets both for every node).
SECURE_BASE="${KAFKA_SECURITY_BASE:-$BASE}"
SECURE_BOOTSTRAP="${KAFKA_SECURITY_BOOTSTRAP:-$BOOTSTRAP}"
case "$SECURITY" in
  plaintext) ;;
  scram) . "$HERE/secure.sh" ;;
  *) printf 'kafka: error: KAFKA_SECURITY=%s: use plaintext or scram\n' "$SECURITY" >&2; exit 2 ;;
esac
KAFKA_VERSION="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$HERE/pom.xml")"

say() { printf 'kafka: %s\n' "$*"; }
die() { printf 'kafka: error: %s\n' "$*" >&2; exit 1; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Our broker: the pid in the pid file is alive and is a kafka.Kafka JVM.
broker_pid() {
  [[ -f "$PIDFILE" ]] || return 1
  local pid
  pid="$(cat "$PIDFILE" 2>/dev/null)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'kafka\.Kafka' || return 1
  echo "$pid"
}

pick_python() {
  local py="${PYTHON:-$ROOT/.venv/bin/python}"
  if [[ -x "$py" ]] || command -v "$py" >/dev/null 2>&1; then
    if "$py" -c 'import kafka' >/dev/null 2>&1; then echo "$py"; return 0; fi
  fi
  return 1
}

# Ready = the broker answers a metadata request (kafka-python's admin client when a Python with
# kafka-python is around), else the port answers and the server log says the server started.
ready() {
  local py
  port_open "$KAFKA_PORT" || return 1
  if [[ "$SECURITY" == scram ]]; then
    secure_ready "$SECURE_BASE" "$BOOTSTRAP" >"$LOGS/ready-check.log" 2>&1
  elif py="$(pick_python)"; then
    "$py" - "$BOOTSTRAP" >"$LOGS/ready-check.log" 2>&1 <<'PY'
import sys
from kafka.admin import KafkaAdminClient
a = KafkaAdminClient(bootstrap_servers=sys.argv[1], client_id="croupier-up", request_timeout_ms=5000)
try:
    a.list_topics()
    # the controller must be known too (topic creation goes there)
    a.describe_cluster()
finally:
    a.close()
PY
  else
    # only the part of server.log written since this start counts
    local size
    size="$(stat -c %s "$LOGS/server.log" 2>/dev/null || echo 0)"
    (( size >= ${LOG_OFFSET:-0} )) || LOG_OFFSET=0
    # (process substitution, not a pipe: grep -q quits early and pipefail would see tail's SIGPIPE)
    grep -q 'Kafka Server started' <(tail -c "+$(( ${LOG_OFFSET:-0} + 1 ))" "$LOGS/server.log" 2>/dev/null)
  fi
}

fail_start() {
  printf 'kafka: error: %s\n' "$1" >&2
  printf -- '--- tail of %s ---\n' "$LOGS/server.log" >&2
  tail -n 40 "$LOGS/server.log" >&2 2>/dev/null || true
  printf -- '--- tail of %s ---\n' "$LOGS/stdout.log" >&2
  tail -n 20 "$LOGS/stdout.log" >&2 2>/dev/null || true
  if [[ -s "$LOGS/ready-check.log" ]]; then
    printf -- '--- last readiness check (%s) ---\n' "$LOGS/ready-check.log" >&2
    tail -n 5 "$LOGS/ready-check.log" >&2
  fi
  cat >&2 <<EOF
kafka: what to do next:
  - read the logs above (full: $LOGS/server.log, $LOGS/stdout.log)
  - port clash? another process on $KAFKA_PORT/$KAFKA_CONTROLLER_PORT: 'ss -ltnp'; or set KAFKA_PORT / KAFKA_CONTROLLER_PORT
  - corrupt or foreign data? 'KAFKA_WIPE=1 bash deploy/kafka/down.sh' then up again
  - slow machine? KAFKA_START_TIMEOUT=180 bash deploy/kafka/up.sh
EOF
  exit 1
}

wait_ready() {
  local pid="$1" start=$SECONDS
  say "waiting for the broker on $BOOTSTRAP (timeout ${TIMEOUT}s)..."
  until ready; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PIDFILE"
      fail_start "the broker process $pid exited during startup"
    fi
    if (( SECONDS - start >= TIMEOUT )); then
      fail_start "the broker (pid $pid) did not accept requests on $BOOTSTRAP within ${TIMEOUT}s; it is still running (stop it with 'bash deploy/kafka/down.sh')"
    fi
    sleep 1
  done
  say "ready after $((SECONDS - start))s"
}


# What a client needs: the address, and on a secured broker the principals' settings.
announce() {
  echo "KAFKA_BOOTSTRAP=$BOOTSTRAP"
  if [[ "$SECURITY" == scram ]]; then echo "KAFKA_CLIENTS=$SECURE_BASE/clients"; fi
}

# The security a data directory was formatted with (its SCRAM users exist only if scram).
formatted_with() { cat "$BASE/security" 2>/dev/null || echo plaintext; }

mkdir -p "$BASE" "$LOGS"
if [[ -f "$DATA_DIR/meta.properties" && "$(formatted_with)" != "$SECURITY" ]]; then
  if [[ "${KAFKA_OTHER_MODE:-stop}" != wipe ]]; then
    die "$DATA_DIR was formatted with KAFKA_SECURITY=$(formatted_with), not $SECURITY; stop it and wipe it first ('KAFKA_WIPE=1 bash deploy/kafka/down.sh'), or give this one its own KAFKA_BASE and ports"
  fi
  say "its data was formatted with KAFKA_SECURITY=$(formatted_with), not $SECURITY: wiping it and starting an empty broker (KAFKA_OTHER_MODE=wipe)"
  KAFKA_WIPE=1 bash "$HERE/down.sh" >/dev/null
fi
if [[ "$SECURITY" == scram ]]; then
  secure_prepare "$SECURE_BASE" "$SECURE_BOOTSTRAP" >/dev/null || die "could not prepare the certificates and passwords in $SECURE_BASE"
fi

# ---- already running? ------------------------------------------------------------------------
if pid="$(broker_pid)"; then
  if ready; then
    say "already running (pid $pid) on $BOOTSTRAP"
    announce
    exit 0
  fi
  say "process $pid is alive but not answering yet on $BOOTSTRAP"
  [[ "${KAFKA_WAIT:-1}" == 0 ]] && exit 0
  wait_ready "$pid"
  if [[ "$SECURITY" == scram ]]; then  # started without waiting (a cluster's node): its ACLs now
    say "the roles' users and ACLs (croupier acls, as admin)"
    secure_acls "$SECURE_BASE" | sed 's/^/kafka:   /' || die "could not create the roles' users and ACLs (see above)"
  fi
  announce
  exit 0
fi
if [[ -f "$PIDFILE" ]]; then
  say "removing stale pid file (process $(cat "$PIDFILE" 2>/dev/null) is gone)"
  rm -f "$PIDFILE"
fi
for p in "$KAFKA_PORT" "$KAFKA_CONTROLLER_PORT"; do
  # a broker that was just killed may take a moment to release its sockets
  for _ in $(seq 20); do port_open "$p" || break; sleep 0.5; done
  port_open "$p" && die "port $p on 127.0.0.1 is taken by a process this script did not start ('ss -ltnp | grep :$p'); stop it or set KAFKA_PORT / KAFKA_CONTROLLER_PORT"
done

command -v "$JAVA" >/dev/null || die "java not found (Kafka $KAFKA_VERSION needs a JDK 17+)"

# ---- jars --------------------------------------------------------------------------------------
STAMP="$LIBS/.kafka-$KAFKA_VERSION"
if [[ ! -f "$STAMP" ]]; then
  command -v "$MVN" >/dev/null || die "mvn not found; it is needed once to fetch the Kafka jars"
  say "resolving Kafka $KAFKA_VERSION jars from Maven Central (first time only, ~1 min)..."
  rm -rf "$LIBS"
  t0=$SECONDS
  mvn_args=(-B -q -Dstyle.color=never -f "$HERE/pom.xml" "-Dkafka.libs.dir=$LIBS" package)
  if "$MVN" -o "${mvn_args[@]}" >"$BASE/mvn.log" 2>&1; then
    say "resolved from the local Maven cache (~/.m2)"
  else
    say "not all in ~/.m2 yet; downloading..."
    "$MVN" "${mvn_args[@]}" >"$BASE/mvn.log" 2>&1 || { cat "$BASE/mvn.log" >&2; die "mvn could not resolve the Kafka jars (log: $BASE/mvn.log)"; }
  fi
  ls "$LIBS"/kafka_2.13-"$KAFKA_VERSION".jar >/dev/null 2>&1 || die "mvn ran but $LIBS has no kafka_2.13-$KAFKA_VERSION.jar"
  touch "$STAMP"
  say "$(ls "$LIBS"/*.jar | wc -l) jars in $LIBS ($((SECONDS - t0))s)"
fi

# ---- config --------------------------------------------------------------------------------------
sed -e "s|@KAFKA_PORT@|$KAFKA_PORT|g" \
    -e "s|@KAFKA_CONTROLLER_PORT@|$KAFKA_CONTROLLER_PORT|g" \
    -e "s|@DATA_DIR@|$DATA_DIR|g" \
    "${KAFKA_PROPERTIES_IN:-$HERE/server.properties.in}" >"$PROPS"
if [[ "$SECURITY" == scram ]]; then
  chmod 600 "$PROPS"  # it holds the brokers' own password
  secure_properties "$SECURE_BASE" "$KAFKA_PORT" "$KAFKA_CONTROLLER_PORT" >>"$PROPS"
fi

JAVA_OPTS=(
  $KAFKA_HEAP_OPTS
  -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError
  -Djava.awt.headless=true
  "-Dlog4j2.configurationFile=$HERE/log4j2.properties"
  "-Dkafka.logs.dir=$LOGS"
  -cp "$LIBS/*"
)

# ---- format storage (once) ----------------------------------------------------------------------
if [[ ! -f "$DATA_DIR/meta.properties" ]]; then
  # A Kafka Uuid: 16 random bytes, URL-safe base64 without padding (22 chars); not starting
  # with '-' (it would read as an option).
  cid="${KAFKA_CLUSTER_ID:-}"
  while [[ -z "$cid" ]]; do
    cid="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n' | cut -c1-22)"
    [[ "$cid" == -* ]] && cid=""
  done
  say "formatting $DATA_DIR (cluster id $cid, security $SECURITY)"
  mkdir -p "$DATA_DIR"
  scram=()
  if [[ "$SECURITY" == scram ]]; then mapfile -t scram < <(secure_format_args "$SECURE_BASE"); fi
  "$JAVA" "${JAVA_OPTS[@]}" kafka.tools.StorageTool format --ignore-formatted \
      -t "$cid" -c "$PROPS" "${scram[@]}" >"$LOGS/format.log" 2>&1 \
    || { cat "$LOGS/format.log" >&2; die "storage format failed"; }
  echo "$SECURITY" >"$BASE/security"
fi

# ---- start -------------------------------------------------------------------------------------
say "starting Kafka $KAFKA_VERSION on $BOOTSTRAP (controller 127.0.0.1:$KAFKA_CONTROLLER_PORT)"
: >"$LOGS/stdout.log"
LOG_OFFSET="$(stat -c %s "$LOGS/server.log" 2>/dev/null || echo 0)"
# setsid: its own session, so it outlives the shell (and its process group) that ran up.sh
setsid nohup "$JAVA" "${JAVA_OPTS[@]}" kafka.Kafka "$PROPS" >>"$LOGS/stdout.log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$PIDFILE"
[[ "${KAFKA_WAIT:-1}" == 0 ]] && { say "started (pid $pid), not waiting (KAFKA_WAIT=0)"; exit 0; }
wait_ready "$pid"
if [[ "$SECURITY" == scram ]]; then
  say "the roles' users and ACLs (croupier acls, as admin)"
  secure_acls "$SECURE_BASE" | sed 's/^/kafka:   /' || die "could not create the roles' users and ACLs (see above)"
fi
say "running (pid $pid); data: $DATA_DIR; logs: $LOGS/server.log"
announce
