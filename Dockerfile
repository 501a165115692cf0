# croupier's image: every command (`croupier worker`, `croupier api`, `croupier projector`, ...)
# with the pinned dependencies of constraints.txt in a virtual environment (/opt/croupier).
# The base is any Debian bookworm with python3 (3.11) and python3-venv. `make image`
# (deploy/image.sh) builds one from Debian's packages with mmdebstrap, no registry needed,
# and passes it as BASE; with a registry at hand, `docker build -t croupier:dev .` takes
# the default, debian:bookworm-slim, and installs python3 itself.
# The Kubernetes manifests (deploy/k8s) name it `croupier`; their overlays set the name and tag.
ARG BASE=docker.io/library/debian:bookworm-slim
FROM ${BASE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/croupier/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

RUN if ! command -v python3 >/dev/null || ! python3 -c 'import venv, ensurepip'; then \
        apt-get update && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
        && rm -rf /var/lib/apt/lists/*; \
    fi \
    && python3 -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' \
    && python3 -m venv /opt/croupier

WORKDIR /app
COPY pyproject.toml constraints.txt README.md LICENSE ./
# The dependencies first, in a layer of their own that a change of croupier's code keeps. A
# network that inspects TLS needs its certificate authorities: pass them as the build secret
# `ca` (deploy/image.sh passes the host's bundle); they stay out of the image.
RUN --mount=type=secret,id=ca,required=false \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi \
    && mkdir -p schemas services && touch schemas/__init__.py services/__init__.py \
    && pip install -c constraints.txt . && pip uninstall -y croupier
COPY schemas ./schemas
COPY services ./services
RUN --mount=type=secret,id=ca,required=false \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi \
    && pip install --no-deps -c constraints.txt . \
    && rm -rf build \
    && useradd --uid 10001 --user-group --no-create-home --home-dir /app croupier

USER 10001
EXPOSE 8000 8080
ENTRYPOINT ["croupier"]
CMD ["--help"]
