#!/usr/bin/env bash
# iptables from Debian, for the soak's network partition (tests/soak). Idempotent: does nothing
# when it is installed. Needs root (apt-get; the soak itself needs root for iptables and tmpfs).
set -euo pipefail

if command -v iptables >/dev/null; then
    exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
    echo "deploy/soak-tools.sh: run as root (apt-get install iptables)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends iptables >/dev/null
iptables --version
