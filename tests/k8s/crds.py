"""Validating custom resources against the schemas fetched by `make k8s-schemas` (.data/k8s)."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import jsonschema

from tests.k8s.kustomize import Object
from tests.k8s.manifests import ROOT

SCHEMAS = ROOT / ".data" / "k8s"
MISSING = "the schemas of the custom resources are not there: run `make k8s-schemas`"


def strict(schema: Any) -> Any:
    """The CRD's schema, refusing unknown fields as `kubectl apply --validate=strict` does: an
    object whose properties are listed and whose unknown fields are not preserved gets
    additionalProperties false (the API server would otherwise drop a misspelt field silently)."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strict(v) for k, v in schema.items() if not k.startswith("x-kubernetes-")}
    if (
        "properties" in schema
        and "additionalProperties" not in schema
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    if schema.get("x-kubernetes-int-or-string"):
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    return out


def crd_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    """The strict openAPIV3Schema of each (apiVersion, kind) that the fetched CRDs serve."""
    folder = SCHEMAS / "crds"
    assert folder.is_dir(), MISSING
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(folder.glob("*.json")):
        crd = json.loads(path.read_text())
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            if version["served"]:
                schema = strict(copy.deepcopy(version["schema"]["openAPIV3Schema"]))
                found[(f"{group}/{version['name']}", kind)] = schema
    return found


def crd_errors(obj: Object, schemas: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
    """What is wrong with a Strimzi resource, by its CRD (empty when it is valid)."""
    schema = schemas[(obj["apiVersion"], obj["kind"])]
    validator = jsonschema.Draft7Validator(schema)
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))
    ]


def monitoring_errors(objects: list[Object]) -> dict[str, str | None]:
    """prometheus-operator's validators' verdict on each resource, by kind/name (None: valid)."""
    script = SCHEMAS / "validate.mjs"
    assert script.is_file() and (SCHEMAS / "node_modules").is_dir(), MISSING
    done = subprocess.run(
        ["node", str(script)],
        input=json.dumps(objects),
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(script).parent,
        timeout=120,
    )
    verdicts = [json.loads(line) for line in done.stdout.splitlines()]
    return {f"{v['kind']}/{v['name']}": v["error"] for v in verdicts}
