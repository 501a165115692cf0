"""The three-node cluster secured like the single broker (deploy/kafka/cluster.sh with
KAFKA_SECURITY=scram): one CA and one set of passwords for its nodes, the roles' ACLs applied,
topics replicated three times; each role does its job on it and game is refused beyond its own.
Its own ports (127.0.0.1:29492-29497, or SECURITY_CLUSTER_PORT) and base, wiped before and after.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka import KafkaProducer  # type: ignore[import-untyped]
from kafka.admin import KafkaAdminClient  # type: ignore[import-untyped]
from kafka.errors import TopicAuthorizationFailedError  # type: ignore[import-untyped]

from services.security import clients
from services.topics import ensure
from tests.kafka import ROOT
from tests.security.conftest import Secured
from tests.security.flows import settle_as_roles


def _cluster(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        ["bash", str(ROOT / "deploy" / "kafka" / "cluster.sh"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    if done.returncode != 0:
        raise RuntimeError(f"cluster.sh {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


@pytest.fixture(scope="module")
def cluster() -> Iterator[Secured]:
    base = ROOT / ".data" / "kafka-security-cluster"
    first = int(os.environ.get("SECURITY_CLUSTER_PORT", "29492"))
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("CROUPIER_") and key != "KAFKA_BOOTSTRAP"
    }
    env |= {
        "KAFKA_CLUSTER_BASE": str(base),
        "KAFKA_CLUSTER_PORT": str(first),
        "KAFKA_SECURITY": "scram",
        "PYTHON": sys.executable,
    }
    _cluster(env, "down", "--wipe")
    out = _cluster(env, "up")
    bootstrap = ",".join(f"127.0.0.1:{first + n}" for n in range(3))
    assert out.splitlines()[-1] == f"KAFKA_BOOTSTRAP={bootstrap}", out
    assert f"KAFKA_CLIENTS={base}/clients" in out, out
    secured = Secured(bootstrap=bootstrap, base=base)
    try:
        admin = secured.settings("admin", replication_factor=3)
        assert ensure(admin, io.StringIO()) == []
        yield secured
    finally:
        _cluster(env, "down", "--wipe")


def test_every_node_answers_the_roles_from_one_set_of_client_settings(cluster: Secured) -> None:
    auditor = cluster.settings("auditor")
    assert auditor.kafka_bootstrap == cluster.bootstrap
    admin = KafkaAdminClient(**clients.kafka_python(cluster.settings("admin")))
    try:
        described = admin.describe_topics(["settlements"])
    finally:
        admin.close()
    replicas = {len(p["replica_nodes"]) for p in described[0]["partitions"]}
    assert replicas == {3}


def test_game_may_not_write_settlements_on_the_cluster(cluster: Secured) -> None:
    producer = KafkaProducer(
        **clients.kafka_python(cluster.settings("game")), acks="all", max_block_ms=10_000
    )
    try:
        with pytest.raises(TopicAuthorizationFailedError):
            producer.send("settlements", value=b"{}", key=b"T1").get(timeout=10)
    finally:
        producer.close(timeout=5)


def test_a_round_published_as_game_is_settled_on_the_cluster_and_read_by_the_wallet(
    cluster: Secured, tmp_path: Path
) -> None:
    settle_as_roles(cluster, tmp_path, "T-cluster")
