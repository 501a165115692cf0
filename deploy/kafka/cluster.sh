#!/usr/bin/env bash
# A local three-node Apache Kafka cluster (KRaft, every node broker and controller) on loopback,
# each node started, stopped and crashed by deploy/kafka/up.sh, down.sh and kill9.sh.
#
#   bash deploy/kafka/cluster.sh up          # start the nodes that are not running (idempotent);
#                                            # last line: KAFKA_BOOTSTRAP=<the three brokers>
#   bash deploy/kafka/cluster.sh down [--wipe]   # stop every node (KAFKA_WIPE=1 = --wipe)
#   bash deploy/kafka/cluster.sh status      # nodes, quorum, under-replicated partitions
#   bash deploy/kafka/cluster.sh start N | stop N | kill9 N   # one node (1, 2 or 3)
#
# Env: KAFKA_CLUSTER_PORT (29092): brokers on it and the next two ports, controllers on the three
#      after (29092-29094, 29095-29097); KAFKA_CLUSTER_BASE (.data/kafka-cluster): node N's data,
#      logs and pid under node-N/, the cluster id in cluster.id; KAFKA_HEAP_OPTS
#      ("-Xms128m -Xmx384m" per node); KAFKA_START_TIMEOUT (120 s); PYTHON, JAVA, MVN as up.sh;
#      KAFKA_SECURITY=scram: every node SASL/SCRAM-SHA-512 over TLS with ACLs (deploy/kafka/secure.sh),
#      one CA, broker certificate and set of passwords for the three, the principals' client
#      settings in KAFKA_CLUSTER_BASE/clients/<role>.env naming the three brokers.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BASE="${KAFKA_CLUSTER_BASE:-$ROOT/.data/kafka-cluster}"
FIRST="${KAFKA_CLUSTER_PORT:-29092}"
NODES=(1 2 3)
export KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xms128m -Xmx384m}"
export KAFKA_START_TIMEOUT="${KAFKA_START_TIMEOUT:-120}"
export PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"

say() { printf 'kafka-cluster: %s\n' "$*"; }
die() { printf 'kafka-cluster: error: %s\n' "$*" >&2; exit 1; }

[[ "$FIRST" =~ ^[0-9]+$ ]] || die "KAFKA_CLUSTER_PORT must be a port number, not '$FIRST'"
broker_port() { echo $((FIRST + $1 - 1)); }
controller_port() { echo $((FIRST + 3 + $1 - 1)); }
bootstrap() {
  local n out=()
  for n in "${NODES[@]}"; do out+=("127.0.0.1:$(broker_port "$n")"); done
  (IFS=,; echo "${out[*]}")
}
voters() {
  local n out=()
  for n in "${NODES[@]}"; do out+=("$n@127.0.0.1:$(controller_port "$n")"); done
  (IFS=,; echo "${out[*]}")
}

# The environment that makes up.sh, down.sh and kill9.sh act on node N.
node() {
  local n="$1"; shift
  KAFKA_BASE="$BASE/node-$n" KAFKA_PORT="$(broker_port "$n")" \
    KAFKA_CONTROLLER_PORT="$(controller_port "$n")" "$@"
}

# One id for the whole cluster: every node is formatted with it (the one on disk wins).
cluster_id() {
  local n found
  if [[ ! -s "$BASE/cluster.id" ]]; then
    for n in "${NODES[@]}"; do
      found="$(sed -n 's/^cluster.id=//p' "$BASE/node-$n/data/meta.properties" 2>/dev/null || true)"
      [[ -n "$found" ]] && { echo "$found" >"$BASE/cluster.id"; break; }
    done
  fi
  if [[ ! -s "$BASE/cluster.id" ]]; then
    while :; do
      found="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n' | cut -c1-22)"
      [[ "$found" != -* ]] && break
    done
    echo "$found" >"$BASE/cluster.id"
  fi
  cat "$BASE/cluster.id"
}

# Node N's template: this file's two placeholders filled, up.sh's left for up.sh.
template() {
  local n="$1"
  mkdir -p "$BASE/node-$n"
  sed -e "s|@NODE_ID@|$n|g" -e "s|@QUORUM_VOTERS@|$(voters)|g" \
    "$HERE/cluster.properties.in" >"$BASE/node-$n/cluster.properties.in"
  echo "$BASE/node-$n/cluster.properties.in"
}

# up.sh for node N, its lines marked with the node and without its KAFKA_BOOTSTRAP line.
up_node() {
  local n="$1" wait="$2" tmpl id
  tmpl="$(template "$n")"
  id="$(cluster_id)"
  node "$n" env KAFKA_PROPERTIES_IN="$tmpl" KAFKA_CLUSTER_ID="$id" KAFKA_WAIT="$wait" \
    KAFKA_SECURITY_BASE="$BASE" KAFKA_SECURITY_BOOTSTRAP="$(bootstrap)" \
    bash "$HERE/up.sh" | sed -e '/^KAFKA_BOOTSTRAP=/d' -e '/^KAFKA_CLIENTS=/d' -e "s/^kafka:/node $n:/"
}

status() {
  if [[ "${KAFKA_SECURITY:-plaintext}" == scram ]]; then
    # as the admin of the shared clients' files (they name the three brokers)
    (set -a; . "$BASE/clients/admin.env"; set +a; cd "$ROOT"; status_py)
  else
    (export KAFKA_BOOTSTRAP="$(bootstrap)"; cd "$ROOT"; status_py)
  fi
}

status_py() {
  "$PYTHON" - <<'PY'
from kafka.admin import KafkaAdminClient
from services.security import clients
from services.settings import Settings

admin = KafkaAdminClient(**clients.kafka_python(Settings()), client_id="croupier-cluster-status",
                         request_timeout_ms=10000)
try:
    cluster = admin.describe_cluster()
    brokers = sorted(b["broker_id"] for b in cluster["brokers"] if not b.get("is_fenced"))
    quorum = admin.describe_metadata_quorum()["topics"][0]["partitions"][0]
    print(f"kafka-cluster: brokers up {brokers} of [1, 2, 3]; "
          f"quorum leader {quorum['leader_id']}")
    under, offline, total = [], [], 0
    for topic in admin.describe_topics():
        for p in topic["partitions"]:
            total += 1
            name = f"{topic['name']}-{p['partition_index']}"
            if p["leader_id"] < 0:
                offline.append(name)
            elif len(p["isr_nodes"]) < len(p["replica_nodes"]):
                under.append(name)
    print(f"kafka-cluster: {total} partitions, {len(under)} under-replicated, "
          f"{len(offline)} without a leader")
finally:
    admin.close()
PY
}

cmd="${1:-}"
shift || true
mkdir -p "$BASE"
case "$cmd" in
  up)
    # Start every node that is not running first, without waiting: a lone node has no quorum
    # (two of three controllers) and would never become ready by itself.
    waiting=()
    for n in "${NODES[@]}"; do
      out="$(up_node "$n" 0)"
      printf '%s\n' "$out"
      [[ "$out" == *"already running"* ]] || waiting+=("$n")
    done
    for n in "${waiting[@]}"; do up_node "$n" 1; done
    status || say "status not available yet (the cluster may still be electing)"
    if [[ "${KAFKA_SECURITY:-plaintext}" == scram ]]; then echo "KAFKA_CLIENTS=$BASE/clients"; fi
    echo "KAFKA_BOOTSTRAP=$(bootstrap)"
    ;;
  down)
    # All nodes at once: stopped one by one, the last could not finish its controlled shutdown
    # without a quorum and would wait for down.sh's SIGKILL.
    pids=()
    for n in "${NODES[@]}"; do
      (node "$n" bash "$HERE/down.sh" "$@" | sed "s/^kafka:/node $n:/") &
      pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid"; done
    if [[ "${KAFKA_WIPE:-0}" == 1 || " $* " == *" --wipe "* ]]; then
      rm -f "$BASE/cluster.id"
    fi
    ;;
  start|stop|kill9)
    n="${1:-}"
    [[ "$n" =~ ^[123]$ ]] || die "usage: $0 $cmd N (N = 1, 2 or 3)"
    case "$cmd" in
      start) up_node "$n" "${KAFKA_WAIT:-1}" ;;
      stop) node "$n" bash "$HERE/down.sh" | sed "s/^kafka:/node $n:/" ;;
      kill9) node "$n" bash "$HERE/kill9.sh" | sed "s/^kafka:/node $n:/" ;;
    esac
    ;;
  status) status ;;
  bootstrap) echo "KAFKA_BOOTSTRAP=$(bootstrap)" ;;
  *) die "usage: $0 up | down [--wipe] | status | bootstrap | start N | stop N | kill9 N" ;;
esac
