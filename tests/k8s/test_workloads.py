"""The workers, the read side and the overlays: probes, credentials, images, sizes."""

from __future__ import annotations

import base64
from pathlib import Path

from services.history.settings import ApiSettings, AuthSettings
from services.settings import Settings
from services.signing.keys import parse as load_keys_bytes
from services.signing.signature import NO_KEYS
from tests.k8s.kustomize import Object, build, pod_spec
from tests.k8s.manifests import K8S, OVERLAYS, ROOT, containers, env, find, of_kind, overlay


def _volumes(workload: Object) -> dict[str, Object]:
    spec = pod_spec(workload)
    assert spec is not None
    return {v["name"]: v for v in spec.get("volumes", [])}


def _mounted(workload: Object, container: Object, path: str) -> Object:
    """The volume that holds the file at `path` in the container (its key under the mount)."""
    for mount in container.get("volumeMounts", []):
        prefix = mount["mountPath"].rstrip("/") + "/"
        if path.startswith(prefix):
            volume = _volumes(workload)[mount["name"]]
            keys = [item["path"] for item in volume["secret"].get("items", [])]
            assert path[len(prefix) :] in keys, f"{path} is not among {keys}"
            return volume
    raise AssertionError(f"nothing is mounted at {path}")


def test_every_kafka_client_reads_its_password_and_the_cluster_ca_from_strimzis_secrets() -> None:
    for name in OVERLAYS:
        for workload, container in containers(overlay(name)):
            values = env(container)
            if "KAFKA_BOOTSTRAP" not in values:
                continue
            assert values["CROUPIER_KAFKA_SECURITY_PROTOCOL"] == "SASL_SSL"
            assert values["CROUPIER_KAFKA_SASL_MECHANISM"] == "SCRAM-SHA-512"
            password = _mounted(workload, container, values["CROUPIER_KAFKA_PASSWORD_FILE"])
            assert password["secret"]["secretName"] == values["CROUPIER_KAFKA_USERNAME"]
            assert password["secret"]["items"] == [{"key": "password", "path": "password"}]
            ca = _mounted(workload, container, values["CROUPIER_KAFKA_CA_FILE"])
            assert ca["secret"]["secretName"] == "croupier-cluster-ca-cert"
            assert ca["secret"]["items"] == [{"key": "ca.crt", "path": "ca.crt"}]


def test_each_worker_is_a_static_member_named_after_its_stable_pod_name() -> None:
    for name in OVERLAYS:
        worker = find(overlay(name), "StatefulSet", "croupier-worker")
        (container,) = worker["spec"]["template"]["spec"]["containers"]
        assert container["args"] == ["worker"]
        assert env(container)["CROUPIER_INSTANCE_ID"] == {
            "fieldRef": {"fieldPath": "metadata.name"}
        }
        assert worker["spec"]["serviceName"] == "croupier-worker"


def test_a_blocked_worker_is_not_ready_but_is_never_restarted_for_it() -> None:
    for name in OVERLAYS:
        worker = find(overlay(name), "StatefulSet", "croupier-worker")
        (container,) = worker["spec"]["template"]["spec"]["containers"]
        port = {p["name"]: p["containerPort"] for p in container["ports"]}["http"]
        assert env(container)["CROUPIER_WEB_PORT"] == str(port)
        assert env(container)["CROUPIER_WEB_HOST"] == "0.0.0.0"
        assert container["readinessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
        liveness = container["livenessProbe"]
        assert liveness["httpGet"]["path"] != "/health"
        # a restore or refold holds the event loop: liveness allows minutes, not seconds
        patience = liveness["periodSeconds"] * liveness["failureThreshold"]
        assert patience >= 120


def test_blocked_workers_are_still_scraped_and_may_be_evicted() -> None:
    for name in OVERLAYS:
        objects = overlay(name)
        service = find(objects, "Service", "croupier-worker")
        assert service["spec"]["publishNotReadyAddresses"] is True
        assert service["spec"]["clusterIP"] == "None"
        budget = find(objects, "PodDisruptionBudget", "croupier-worker")
        assert budget["spec"]["maxUnavailable"] == 1
        assert budget["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow"
        labels = find(objects, "StatefulSet", "croupier-worker")["spec"]["template"]["metadata"][
            "labels"
        ]
        assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()
        assert service["spec"]["selector"].items() <= labels.items()


def test_workers_have_time_to_finish_their_transaction_when_stopped() -> None:
    for name in OVERLAYS:
        worker = find(overlay(name), "StatefulSet", "croupier-worker")
        # the worker waits up to 30 s for its engine to stop (services/settlement/worker.py)
        assert worker["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] > 30


def test_the_read_side_serves_from_the_database_secret_and_projects_a_shard_per_replica() -> None:
    replicas = {"local": 1, "production": 2}
    for name in OVERLAYS:
        objects = overlay(name)
        api = find(objects, "Deployment", "croupier-api")
        projector = find(objects, "StatefulSet", "croupier-projector")
        assert api["spec"]["template"]["spec"]["containers"][0]["args"] == ["api", "--serve-only"]
        (shard,) = projector["spec"]["template"]["spec"]["containers"]
        assert shard["args"] == ["projector"]
        # one shard a replica: the count is the replicas', the number the pod's ordinal
        assert projector["spec"]["replicas"] == replicas[name]
        told = env(shard)
        assert told["CROUPIER_API_PROJECTOR_SHARDS"] == str(replicas[name])
        assert told["CROUPIER_API_PROJECTOR_SHARD"] == {
            "fieldRef": {"fieldPath": "metadata.labels['apps.kubernetes.io/pod-index']"}
        }
        assert projector["spec"]["updateStrategy"] == {"type": "RollingUpdate"}
        for workload in (api, projector):
            (container,) = workload["spec"]["template"]["spec"]["containers"]
            assert env(container)["DATABASE_URL"] == {
                "secretKeyRef": {"name": "croupier-database", "key": "DATABASE_URL"}
            }
        (container,) = api["spec"]["template"]["spec"]["containers"]
        assert container["readinessProbe"]["httpGet"]["path"] == "/health"
        assert "httpGet" not in container["livenessProbe"]  # a database outage restarts nothing
        assert find(objects, "Service", "croupier-api")["spec"]["ports"][0]["port"] == 8080


def test_local_generates_the_database_secret_and_production_expects_an_existing_one() -> None:
    local = find(overlay("local"), "Secret", "croupier-database")
    url = base64.b64decode(local["data"]["DATABASE_URL"]).decode()
    assert url.startswith("postgresql://") and "@croupier-postgres:5432/" in url
    assert not of_kind(overlay("production"), "Secret")


def test_the_api_reads_its_token_checks_from_a_configmap_local_generates_and_production_expects() -> (
    None
):
    for name in OVERLAYS:
        [(_, api)] = [
            (w, c) for w, c in containers(overlay(name)) if w["metadata"]["name"] == "croupier-api"
        ]
        assert api["envFrom"] == [{"configMapRef": {"name": "croupier-api-auth"}}]
    local = find(overlay("local"), "ConfigMap", "croupier-api-auth")
    assert local["data"] == {"CROUPIER_API_AUTH": "off"}
    assert not [
        c
        for c in of_kind(overlay("production"), "ConfigMap")
        if c["metadata"]["name"] == "croupier-api-auth"
    ]


def test_the_overlays_set_the_image_and_put_everything_in_the_namespace() -> None:
    images = {
        "local": "localhost/croupier:dev",  # `make image`'s
        "production": "registry.example.com/croupier:0.1.0",
    }
    for name, image in images.items():
        objects = overlay(name)
        assert {c["image"] for _, c in containers(objects) if c["name"] != "postgres"} == {image}
        assert {o["metadata"].get("namespace") for o in objects if o["kind"] != "Namespace"} == {
            "croupier"
        }


def test_every_workload_names_the_one_image_the_kustomizations_set() -> None:
    base = build(K8S / "base")
    named = {(w["metadata"]["name"], c["name"]): c["image"] for w, c in containers(base)}
    assert set(named) == {
        ("croupier-worker", "worker"),
        ("croupier-api", "api"),
        ("croupier-projector", "projector"),
        ("croupier-archive", "archive"),
    }
    assert set(named.values()) == {"croupier:dev"}
    written = [
        line.strip()
        for path in sorted(K8S.rglob("*.yaml"))
        for line in path.read_text().splitlines()
        if line.strip().startswith("image:") or "registry.example.com" in line
    ]
    assert sorted(written) == ["image: croupier"] * 4 + ["image: postgres:16"] + [
        "newName: registry.example.com/croupier"
    ]


def test_workers_read_the_table_keys_from_a_secret_local_generates_and_production_expects() -> None:
    for name in OVERLAYS:
        objects = overlay(name)
        worker = find(objects, "StatefulSet", "croupier-worker")
        (container,) = worker["spec"]["template"]["spec"]["containers"]
        volume = _mounted(worker, container, env(container)["CROUPIER_TABLE_KEYS_FILE"])
        assert volume["secret"]["secretName"] == "croupier-table-keys"
        assert volume["secret"]["items"] == [{"key": "table-keys.json", "path": "table-keys.json"}]
        readers = [w for w, c in containers(objects) if "CROUPIER_TABLE_KEYS_FILE" in env(c)]
        assert readers == [worker]  # the only role that verifies signatures
    local = find(overlay("local"), "Secret", "croupier-table-keys")
    assert load_keys_bytes(base64.b64decode(local["data"]["table-keys.json"])) == NO_KEYS


PROJECTOR_RSS_MIB = 730
"""The most a projector held while catching up in `make bench-readside` (10,000,000 bets; README)."""


def _mebibytes(quantity: str) -> int:
    for suffix, factor in (("Gi", 1024), ("Mi", 1)):
        if quantity.endswith(suffix):
            return int(quantity.removesuffix(suffix)) * factor
    raise AssertionError(f"a memory quantity in Mi or Gi, not {quantity}")


def test_a_projector_catching_up_fits_in_its_memory_limit_in_every_overlay() -> None:
    """Killed for memory in a catch-up, it would start the same batch again, forever."""
    for name in OVERLAYS:
        projector = find(overlay(name), "StatefulSet", "croupier-projector")
        (container,) = projector["spec"]["template"]["spec"]["containers"]
        limit = _mebibytes(container["resources"]["limits"]["memory"])
        assert limit >= PROJECTOR_RSS_MIB * 1.5, (name, limit)


def test_production_is_larger_than_local() -> None:
    def size(name: str) -> tuple[int, int, int]:
        objects = overlay(name)
        pool = find(objects, "KafkaNodePool", "nodes")
        (volume,) = pool["spec"]["storage"]["volumes"]
        memory = pool["spec"]["resources"]["limits"]["memory"]
        workers = find(objects, "StatefulSet", "croupier-worker")["spec"]["replicas"]
        return int(volume["size"].removesuffix("Gi")), int(memory.removesuffix("Gi")), workers

    local, production = size("local"), size("production")
    assert all(p > q for p, q in zip(production, local, strict=True))
    assert production[2] <= 12  # no more workers than tasks


def test_production_keeps_its_kafka_volumes_when_a_node_pool_is_deleted() -> None:
    pool = find(overlay("production"), "KafkaNodePool", "nodes")
    assert all(v["deleteClaim"] is False for v in pool["spec"]["storage"]["volumes"])
    anti = pool["spec"]["template"]["pod"]["affinity"]["podAntiAffinity"]
    assert list(anti) == ["requiredDuringSchedulingIgnoredDuringExecution"]


def test_the_image_is_built_from_the_pinned_dependencies() -> None:
    lines = (ROOT / "Dockerfile").read_text().splitlines()
    assert "FROM ${BASE}" in lines
    assert any("pip install -c constraints.txt ." in line for line in lines)
    assert 'ENTRYPOINT ["croupier"]' in lines
    assert "USER 10001" in lines
    for _, container in containers(overlay("production")):
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert Path(ROOT / ".dockerignore").read_text().count(".venv") == 1


def test_every_croupier_variable_the_manifests_set_is_a_setting_croupier_reads() -> None:
    known = {f"CROUPIER_{name.upper()}" for name in Settings.model_fields} | {
        f"CROUPIER_API_{name.upper()}"
        for name in [*ApiSettings.model_fields, *AuthSettings.model_fields]
    }
    for name in OVERLAYS:
        for workload, container in containers(overlay(name)):
            unknown = {k for k in env(container) if k.startswith("CROUPIER_")} - known
            assert not unknown, f"{name}: {workload['metadata']['name']} sets {sorted(unknown)}"
