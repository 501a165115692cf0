"""Kubernetes manifests rendered from croupier's own plans (topics, roles): `python -m services.k8s`."""
