"""Kubernetes manifests rendered from croupier's own plans: `python -m services.k8s`."""
