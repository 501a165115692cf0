#!/usr/bin/env bash
# The security of a local broker: SASL/SCRAM-SHA-512 over TLS, the StandardAuthorizer, the roles'
# users and ACLs. Sourced by up.sh when KAFKA_SECURITY=scram (any script starting brokers of this
# repository can source it the same way); each function is also a command:
#
#   bash deploy/kafka/secure.sh prepare BASE BOOTSTRAP      # CA, broker certificate, passwords, clients/*.env
#   bash deploy/kafka/secure.sh properties BASE PORT CONTROLLER_PORT   # print the server.properties part
#   bash deploy/kafka/secure.sh format-args BASE            # print the --add-scram arguments (admin, broker)
#   bash deploy/kafka/secure.sh ready BASE [BOOTSTRAP]      # exit 0 when the broker answers the admin
#   bash deploy/kafka/secure.sh acls BASE [--rotate]        # the roles' users and ACLs (croupier acls)
#
# BASE is the broker's directory (.data/kafka): certificates in BASE/tls, each principal's
# client settings in BASE/clients/<name>.env and its password in BASE/clients/<name>.password.
# Needs a Python with croupier installed: $PYTHON, else <repo>/.venv/bin/python.
set -euo pipefail

SECURE_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SECURE_ROOT="$(cd "$SECURE_HERE/../.." && pwd)"

secure_python() {
  local py="${PYTHON:-$SECURE_ROOT/.venv/bin/python}"
  "$py" -c 'import services.security.local' >/dev/null 2>&1 \
    || { printf 'kafka: error: %s\n' "KAFKA_SECURITY=scram needs croupier installed ($py cannot import it): run 'make install', or set PYTHON" >&2; return 1; }
  echo "$py"
}

# Run a Python command of the repository (from its root, so `services` imports).
secure_py() {
  local py
  py="$(secure_python)"
  (cd "$SECURE_ROOT" && "$py" "$@")
}

secure_prepare() { secure_py -m services.security.local prepare --base "$1" --bootstrap "$2"; }

secure_properties() {
  secure_py -m services.security.local properties --base "$1" --port "$2" --controller-port "$3"
}

secure_format_args() { secure_py -m services.security.local format-args --base "$1"; }

# Run a croupier command as the principal of BASE/clients/<name>.env.
secure_as() {
  local base="$1" name="$2"
  shift 2
  local file="$base/clients/$name.env"
  [[ -f "$file" ]] || { printf 'kafka: error: %s not found (secure.sh prepare makes it)\n' "$file" >&2; return 1; }
  (set -a; . "$file"; set +a
   if [[ -n "${SECURE_AS_BOOTSTRAP:-}" ]]; then export KAFKA_BOOTSTRAP="$SECURE_AS_BOOTSTRAP"; fi
   secure_py "$@")
}

# Ready: the broker at BOOTSTRAP (default: the one the clients' files name) answers the admin.
secure_ready() {
  SECURE_AS_BOOTSTRAP="${2:-}" secure_as "$1" admin - <<'PY'
from kafka.admin import KafkaAdminClient
from services.security import clients
from services.settings import Settings
a = KafkaAdminClient(**clients.kafka_python(Settings()), client_id="croupier-up", request_timeout_ms=5000)
try:
    a.list_topics()
    a.describe_cluster()
finally:
    a.close()
PY
}

secure_acls() {
  local base="$1"
  shift
  secure_as "$base" admin -m services.cli acls --passwords "$base/clients" "$@"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  cmd="${1:-}"
  shift || true
  case "$cmd" in
    prepare|properties|format-args|ready|acls) "secure_${cmd//-/_}" "$@" ;;
    *) echo "usage: $0 prepare|properties|format-args|ready|acls BASE ..." >&2; exit 2 ;;
  esac
fi
