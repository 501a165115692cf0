#!/usr/bin/env bash
# Headless Chromium and its matching chromedriver from Debian, for the browser test (tests/e2e).
# Idempotent: does nothing when both are installed. Needs root (apt-get).
set -euo pipefail

if [[ -x /usr/bin/chromium && -x /usr/bin/chromedriver ]]; then
    exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
    echo "deploy/browser.sh: run as root (apt-get install chromium chromium-driver)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null
/usr/bin/chromium --version
