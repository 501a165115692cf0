#!/usr/bin/env bash
# Build croupier's image without a Docker engine or an image registry:
#   1. the base: a minimal Debian bookworm root file system with python3 (3.11) made by
#      mmdebstrap from Debian's packages, imported as the local image $BASE_IMAGE;
#   2. the Dockerfile built by buildah FROM that base (build argument BASE).
# Installs podman, buildah, mmdebstrap and runc from Debian's packages when missing (needs root;
# runc is what `make test-image` runs the containers with, see docs/OPERATIONS.md "The image").
# Environment: IMAGE (default localhost/croupier:dev), BASE_IMAGE (default localhost/croupier-base:bookworm),
# SUITE (default bookworm), MIRROR (default http://deb.debian.org/debian), REBUILD_BASE=1.
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=${IMAGE:-localhost/croupier:dev}
BASE_IMAGE=${BASE_IMAGE:-localhost/croupier-base:bookworm}
SUITE=${SUITE:-bookworm}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
WORK=${WORK:-.data/image}

missing=()
for tool in podman buildah mmdebstrap runc; do
    command -v "$tool" >/dev/null || missing+=("$tool")
done
if ((${#missing[@]})); then
    echo "installing ${missing[*]} from Debian's packages" >&2
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q podman buildah mmdebstrap runc
fi

start=$(date +%s)
if [[ -n "${REBUILD_BASE:-}" ]] || ! podman image exists "$BASE_IMAGE"; then
    mkdir -p "$WORK"
    # python3 is 3.11 on bookworm; python3-venv for the image's virtual environment.
    mmdebstrap --variant=minbase --mode=auto \
        --include=python3,python3-venv,ca-certificates \
        --aptopt='APT::Install-Recommends "false"' \
        --customize-hook='chroot "$1" apt-get clean' \
        --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/usr/share/doc/* "$1"/usr/share/man/* "$1"/usr/share/locale/*' \
        "$SUITE" "$WORK/rootfs.tar" "$MIRROR"
    podman import --change 'CMD ["/bin/bash"]' "$WORK/rootfs.tar" "$BASE_IMAGE"
    rm -f "$WORK/rootfs.tar"
fi
based=$(date +%s)

# pip's certificate authorities (a network that inspects TLS has its own): the host's, if any
ca=${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}
secret=()
if [[ -s "$ca" ]]; then secret=(--secret "id=ca,src=$ca"); fi
buildah build --isolation "${ISOLATION:-chroot}" --layers --force-rm "${secret[@]}" \
    --build-arg "BASE=$BASE_IMAGE" -t "$IMAGE" -f Dockerfile .
done_at=$(date +%s)

echo "base $((based - start)) s, image $((done_at - based)) s"
podman image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E "croupier" || true
