"""The test renderer does what kustomize does for the features the overlays use."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.k8s.kustomize import KustomizeError, build, merge

POD = {
    "containers": [
        {
            "name": "a",
            "image": "croupier",
            "env": [{"name": "X", "value": "1"}],
            "args": ["worker"],
        },
        {"name": "b", "image": "other:1"},
    ]
}


def test_a_strategic_merge_merges_containers_and_env_by_name_and_replaces_other_lists() -> None:
    patch = {"containers": [{"name": "a", "env": [{"name": "Y", "value": "2"}], "args": ["api"]}]}
    merged = merge(POD, patch, built_in=True)
    assert merged["containers"][0] == {
        "name": "a",
        "image": "croupier",
        "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}],
        "args": ["api"],
    }
    assert merged["containers"][1] == {"name": "b", "image": "other:1"}


def test_a_custom_resource_patch_replaces_lists_and_deletes_keys_set_to_null() -> None:
    base = {"storage": {"volumes": [{"id": 0, "size": "1Gi"}, {"id": 1}]}, "keep": 1, "drop": 2}
    merged = merge(
        base, {"storage": {"volumes": [{"id": 0, "size": "9Gi"}]}, "drop": None}, built_in=False
    )
    assert merged == {"storage": {"volumes": [{"id": 0, "size": "9Gi"}]}, "keep": 1}


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


def test_an_overlay_sets_images_namespace_and_generated_secrets(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "base/kustomization.yaml": "resources: [app.yaml]\n",
            "base/app.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\n"
            "spec: {template: {spec: {containers: [{name: a, image: croupier}, {name: b, image: 'registry:5000/croupier'}]}}}\n",
            "top/kustomization.yaml": "resources: [../base]\nnamespace: n\n"
            "images: [{name: croupier, newName: r.example/croupier, newTag: '1.2'}]\n"
            "secretGenerator: [{name: s, literals: [K=v]}]\ngeneratorOptions: {disableNameSuffixHash: true}\n",
        },
    )
    deployment, secret = build(tmp_path / "top")
    images = [c["image"] for c in deployment["spec"]["template"]["spec"]["containers"]]
    assert images == ["r.example/croupier:1.2", "registry:5000/croupier"]
    assert deployment["metadata"]["namespace"] == secret["metadata"]["namespace"] == "n"
    assert secret["data"] == {"K": "dg=="}


def test_an_unsupported_kustomization_field_is_an_error(tmp_path: Path) -> None:
    _write(tmp_path, {"kustomization.yaml": "resources: []\ncommonLabels: {a: b}\n"})
    with pytest.raises(KustomizeError, match="commonLabels"):
        build(tmp_path)


def test_a_patch_that_matches_nothing_is_an_error(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "kustomization.yaml": "resources: []\npatches: [{path: p.yaml}]\n",
            "p.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: nobody}\n",
        },
    )
    with pytest.raises(KustomizeError, match="matches 0 objects"):
        build(tmp_path)
