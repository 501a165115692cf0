"""A small Kustomize, enough for deploy/k8s: builds a kustomization without the kustomize binary.

Supported (anything else in a kustomization.yaml is an error, so an overlay cannot use a feature
this renderer would silently ignore): `resources` (files and folders holding a kustomization),
`patches` with a `path` (strategic merge: built-in kinds merge their lists of containers, env,
ports, volumes and mounts by key; custom resources and every other list are replaced, and a null
deletes a key, as in a JSON merge patch), `images`, `namespace`, `configMapGenerator`,
`secretGenerator` and `generatorOptions` (without name hashes).
"""

from __future__ import annotations

import base64
import copy
from pathlib import Path
from typing import Any

import yaml

Object = dict[str, Any]

KNOWN = {
    "apiVersion",
    "kind",
    "resources",
    "patches",
    "images",
    "namespace",
    "configMapGenerator",
    "secretGenerator",
    "generatorOptions",
}
BUILT_IN_GROUPS = {"", "apps", "policy", "batch"}
MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "ports": "containerPort",
    "imagePullSecrets": "name",
}
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition"}


class KustomizeError(Exception):
    """The kustomization uses something this renderer does not do, or is wrong."""


def load_documents(path: Path) -> list[Object]:
    """Every YAML document of a file that is not empty."""
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def build(folder: Path) -> list[Object]:
    """The objects `kustomize build folder` would print (in the order resources are listed)."""
    spec = yaml.safe_load((folder / "kustomization.yaml").read_text())
    unknown = set(spec) - KNOWN
    if unknown:
        raise KustomizeError(f"{folder}: unsupported kustomization fields {sorted(unknown)}")
    objects: list[Object] = []
    for entry in spec.get("resources", []):
        path = folder / entry
        objects += build(path) if path.is_dir() else load_documents(path)
    options = spec.get("generatorOptions", {})
    if (spec.get("configMapGenerator") or spec.get("secretGenerator")) and not options.get(
        "disableNameSuffixHash"
    ):
        raise KustomizeError(f"{folder}: generators need generatorOptions.disableNameSuffixHash")
    for generator in spec.get("configMapGenerator", []):
        objects.append(_generated(folder, generator, "ConfigMap"))
    for generator in spec.get("secretGenerator", []):
        objects.append(_generated(folder, generator, "Secret"))
    for patch in spec.get("patches", []):
        if set(patch) != {"path"}:
            raise KustomizeError(f"{folder}: only patches with a path alone are supported")
        for doc in load_documents(folder / patch["path"]):
            _apply(objects, doc, folder / patch["path"])
    for image in spec.get("images", []):
        for obj in objects:
            _retag(obj, image)
    if "namespace" in spec:
        for obj in objects:
            if obj["kind"] not in CLUSTER_SCOPED:
                obj.setdefault("metadata", {})["namespace"] = spec["namespace"]
    _check_unique(objects, folder)
    return objects


def _generated(folder: Path, generator: Object, kind: str) -> Object:
    data: dict[str, str] = {}
    for entry in generator.get("files", []):
        key, _, path = entry.rpartition("=")
        data[key or Path(path).name] = (folder / path).read_text()
    for entry in generator.get("literals", []):
        key, sep, value = entry.partition("=")
        if not sep:
            raise KustomizeError(f"{folder}: literal {entry!r} has no '='")
        data[key] = value
    metadata: Object = {"name": generator["name"]}
    options = generator.get("options", {})
    for field in ("labels", "annotations"):
        if field in options:
            metadata[field] = dict(options[field])
    if kind == "Secret":
        encoded = {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}
        return {
            "apiVersion": "v1",
            "kind": kind,
            "metadata": metadata,
            "type": "Opaque",
            "data": encoded,
        }
    return {"apiVersion": "v1", "kind": kind, "metadata": metadata, "data": data}


def _group(obj: Object) -> str:
    api = str(obj.get("apiVersion", ""))
    return api.rpartition("/")[0] if "/" in api else ""


def _apply(objects: list[Object], patch: Object, source: Path) -> None:
    targets = [
        obj
        for obj in objects
        if obj["kind"] == patch["kind"]
        and _group(obj) == _group(patch)
        and obj["metadata"]["name"] == patch["metadata"]["name"]
    ]
    if len(targets) != 1:
        raise KustomizeError(
            f"{source}: patch of {patch['kind']} {patch['metadata']['name']} matches "
            f"{len(targets)} objects"
        )
    built_in = _group(patch) in BUILT_IN_GROUPS
    merged = merge(targets[0], patch, built_in=built_in)
    targets[0].clear()
    targets[0].update(merged)


def merge(base: Any, patch: Any, *, built_in: bool, field: str = "") -> Any:
    """A strategic merge patch of `base` (built-in kinds) or a JSON merge patch (custom ones)."""
    if isinstance(patch, dict):
        if any(key.startswith("$") for key in patch):
            raise KustomizeError(f"patch directives are not supported: {sorted(patch)}")
        if not isinstance(base, dict):
            return _without_nulls(copy.deepcopy(patch))
        out = copy.deepcopy(base)
        for key, value in patch.items():
            if value is None:
                out.pop(key, None)
            elif key in out:
                out[key] = merge(out[key], value, built_in=built_in, field=key)
            else:
                out[key] = _without_nulls(copy.deepcopy(value))
        return out
    if isinstance(patch, list) and isinstance(base, list) and built_in and field in MERGE_KEYS:
        key = MERGE_KEYS[field]
        out_list = copy.deepcopy(base)
        for item in patch:
            match = [i for i, have in enumerate(out_list) if have.get(key) == item.get(key)]
            if match:
                out_list[match[0]] = merge(out_list[match[0]], item, built_in=True)
            else:
                out_list.append(copy.deepcopy(item))
        return out_list
    return copy.deepcopy(patch)


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def pod_spec(obj: Object) -> Object | None:
    """The pod template's spec of a workload, the spec of a Pod, else None."""
    if obj["kind"] == "Pod":
        spec: Object = obj["spec"]
        return spec
    template = obj.get("spec", {}).get("template", {})
    found = template.get("spec") if _group(obj) in BUILT_IN_GROUPS else None
    return found


def _retag(obj: Object, image: Object) -> None:
    spec = pod_spec(obj)
    if spec is None:
        return
    for container in spec.get("containers", []) + spec.get("initContainers", []):
        name, tag = _split(container["image"])
        if name != image["name"]:
            continue
        name = image.get("newName", name)
        tag = image.get("newTag", tag)
        container["image"] = f"{name}:{tag}" if tag else name


def _split(reference: str) -> tuple[str, str | None]:
    """An image reference's name and tag (a colon in the registry's host:port is no tag)."""
    head, sep, tail = reference.rpartition(":")
    if sep and "/" not in tail:
        return head, tail
    return reference, None


def _check_unique(objects: list[Object], folder: Path) -> None:
    seen: set[tuple[str, str, str]] = set()
    for obj in objects:
        key = (_group(obj), obj["kind"], obj["metadata"]["name"])
        if key in seen:
            raise KustomizeError(f"{folder}: {key} is defined twice")
        seen.add(key)
