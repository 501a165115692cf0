"""The rendered overlays of deploy/k8s, and ways to find objects in them."""

from __future__ import annotations

import copy
import functools
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.k8s.kustomize import Object, build, pod_spec

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
OVERLAYS = ("local", "production")


@functools.cache
def _built(name: str) -> tuple[Object, ...]:
    return tuple(build(K8S / "overlays" / name))


def overlay(name: str) -> list[Object]:
    """The objects of an overlay, as `kubectl apply -k` would send them (a fresh copy)."""
    return copy.deepcopy(list(_built(name)))


def find(objects: list[Object], kind: str, name: str) -> Object:
    found = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(found) == 1, f"{len(found)} {kind} named {name}"
    return found[0]


def of_kind(objects: list[Object], kind: str) -> list[Object]:
    return [o for o in objects if o["kind"] == kind]


def containers(objects: list[Object]) -> Iterator[tuple[Object, Object]]:
    """Every (workload, container) of the objects."""
    for obj in objects:
        spec = pod_spec(obj)
        if spec is not None:
            for container in spec.get("containers", []):
                yield obj, container


def env(container: Object) -> dict[str, Any]:
    """A container's environment: literal values, and the source of the others."""
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """Only these croupier variables set (none of the shell's), for Settings()."""
    saved = {
        k: v for k, v in os.environ.items() if k.startswith("CROUPIER_") or k == "KAFKA_BOOTSTRAP"
    }
    for key in saved:
        del os.environ[key]
    os.environ.update(values)
    try:
        yield
    finally:
        for key in values:
            os.environ.pop(key, None)
        os.environ.update(saved)
