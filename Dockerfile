# croupier's image: every command (`croupier worker`, `croupier api`, `croupier projector`, ...)
# with the pinned dependencies of constraints.txt. Build from the repository's top:
#   docker build -t croupier:dev .
# The Kubernetes manifests (deploy/k8s) name it `croupier`; their overlays set the tag.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY pyproject.toml constraints.txt README.md LICENSE ./
COPY schemas ./schemas
COPY services ./services
RUN pip install -c constraints.txt . \
    && useradd --uid 10001 --user-group --no-create-home --home-dir /app croupier

USER 10001
EXPOSE 8000 8080
ENTRYPOINT ["croupier"]
CMD ["--help"]
