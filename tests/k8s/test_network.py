"""The NetworkPolicies: nothing reaches a pod but what the roles need, and only the API is open."""

from __future__ import annotations

from typing import Any

import pytest

from tests.k8s.kustomize import Object
from tests.k8s.manifests import OVERLAYS, containers, find, of_kind, overlay

ROLES = {"croupier-worker", "croupier-api", "croupier-projector", "croupier-archive"}
MONITORING = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}


def _labels(objects: list[Object], name: str) -> dict[str, str]:
    """The pod labels of the workload `name`."""
    [workload] = [w for w, _ in containers(objects) if w["metadata"]["name"] == name]
    labels: dict[str, str] = workload["spec"]["template"]["metadata"]["labels"]
    return labels


def _matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """Whether a label selector selects pods with these labels (Kubernetes' rules)."""
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        value, values = labels.get(expression["key"]), expression.get("values", [])
        match expression["operator"]:
            case "In":
                ok = value in values
            case "NotIn":
                ok = value not in values
            case "Exists":
                ok = value is not None
            case "DoesNotExist":
                ok = value is None
            case other:
                raise AssertionError(f"unknown operator {other}")
        if not ok:
            return False
    return True


def _open_ports(objects: list[Object], labels: dict[str, str]) -> list[tuple[int, Any]]:
    """(port, from) of every rule of every policy that selects pods with these labels; a rule
    without `from` admits anyone."""
    found = []
    for policy in of_kind(objects, "NetworkPolicy"):
        if not _matches(policy["spec"]["podSelector"], labels):
            continue
        assert policy["spec"]["policyTypes"] == ["Ingress"]
        for rule in policy["spec"].get("ingress", []):
            for port in rule["ports"]:
                found.append((port["port"], rule.get("from")))
    return found


def _admitted(peers: Any, labels: dict[str, str]) -> bool:
    """Whether a pod of the namespace with these labels is among the peers."""
    return peers is None or any(
        "namespaceSelector" not in peer and _matches(peer.get("podSelector", {}), labels)
        for peer in peers
    )


BROKER = {"strimzi.io/cluster": "croupier", "strimzi.io/kind": "Kafka"}


@pytest.mark.parametrize("name", OVERLAYS)
def test_every_pod_of_the_namespace_is_closed_unless_a_policy_opens_a_port(name: str) -> None:
    deny = find(overlay(name), "NetworkPolicy", "croupier-default-deny")
    assert deny["spec"] == {"podSelector": {}, "policyTypes": ["Ingress"]}


@pytest.mark.parametrize("name", OVERLAYS)
def test_only_the_apis_port_is_open_to_anyone(name: str) -> None:
    objects = overlay(name)
    everyone = [
        (policy["metadata"]["name"], port["port"])
        for policy in of_kind(objects, "NetworkPolicy")
        for rule in policy["spec"].get("ingress", [])
        if "from" not in rule
        for port in rule["ports"]
    ]
    assert everyone == [("croupier-api", 8080)]
    assert _open_ports(objects, _labels(objects, "croupier-api")) == [(8080, None)]
    service = find(objects, "Service", "croupier-api")
    assert [p["port"] for p in service["spec"]["ports"]] == [8080]
    assert not [
        s for s in of_kind(objects, "Service") if s["spec"].get("type") not in (None, "ClusterIP")
    ]


@pytest.mark.parametrize("name", OVERLAYS)
def test_the_kafka_listener_admits_the_roles_pods_and_no_other(name: str) -> None:
    objects = overlay(name)
    listeners = [(port, peers) for port, peers in _open_ports(objects, BROKER) if port == 9093]
    postgres = {"app.kubernetes.io/name": "croupier-postgres"}
    strimzi = {"strimzi.io/cluster": "croupier", "strimzi.io/kind": "EntityOperator"}
    for role in ROLES:
        assert any(_admitted(peers, _labels(objects, role)) for _, peers in listeners), role
    for outsider in (postgres, strimzi, {}):
        assert not any(_admitted(peers, outsider) for _, peers in listeners), outsider
    # and Strimzi's own policy for the listener, from networkPolicyPeers, says the same
    (listener,) = find(objects, "Kafka", "croupier")["spec"]["kafka"]["listeners"]
    assert listener["port"] == 9093
    peers = listener["networkPolicyPeers"]
    assert {role for role in ROLES if _admitted(peers, _labels(objects, role))} == ROLES
    assert not _admitted(peers, postgres) and not _admitted(peers, {})


@pytest.mark.parametrize("name", OVERLAYS)
def test_kafkas_own_ports_admit_only_the_clusters_pods_and_strimzis_operator(name: str) -> None:
    objects = overlay(name)
    internal = [(port, peers) for port, peers in _open_ports(objects, BROKER) if port != 9093]
    assert {port for port, _ in internal} == {9090, 9091, 8443}
    entity = {"strimzi.io/cluster": "croupier", "strimzi.io/kind": "EntityOperator"}
    for port, peers in internal:
        assert peers is not None
        for role in ROLES:
            assert not _admitted(peers, _labels(objects, role)), (port, role)
        operator = [p for p in peers if "namespaceSelector" in p]
        assert operator == [
            {
                "namespaceSelector": {},
                "podSelector": {"matchLabels": {"strimzi.io/kind": "cluster-operator"}},
            }
        ]
    assert any(_admitted(peers, entity) for port, peers in internal if port == 9091)


def test_the_database_admits_only_the_read_side() -> None:
    objects = overlay("local")
    postgres = _labels(objects, "croupier-postgres")
    [(port, peers)] = _open_ports(objects, postgres)
    assert port == 5432
    assert {role for role in ROLES if _admitted(peers, _labels(objects, role))} == {
        "croupier-api",
        "croupier-projector",
    }
    # production's database is outside the cluster: no policy names a PostgreSQL there
    assert not [
        p
        for p in of_kind(overlay("production"), "NetworkPolicy")
        if "database" in p["metadata"]["name"]
    ]


@pytest.mark.parametrize("name", OVERLAYS)
def test_metrics_ports_admit_only_the_monitoring_namespace(name: str) -> None:
    objects = overlay(name)
    assert _open_ports(objects, _labels(objects, "croupier-worker")) == [(8000, [MONITORING])]
    exporter = {"strimzi.io/cluster": "croupier", "strimzi.io/name": "croupier-kafka-exporter"}
    assert _open_ports(objects, exporter) == [(9404, [MONITORING])]
    monitor = find(objects, "ServiceMonitor", "croupier-worker")
    assert monitor["spec"]["endpoints"][0]["port"] == "http"
    (container,) = find(objects, "StatefulSet", "croupier-worker")["spec"]["template"]["spec"][
        "containers"
    ]
    assert [p["containerPort"] for p in container["ports"]] == [8000]
    # the projector and the archive serve nothing: no port of theirs is open
    assert _open_ports(objects, _labels(objects, "croupier-projector")) == []
    assert _open_ports(objects, _labels(objects, "croupier-archive")) == []
