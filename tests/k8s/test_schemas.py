"""Every rendered object is valid: core kinds by Kubernetes' schemas (kubernetes-validate, strict),
Strimzi's by its CRDs and prometheus-operator's by its schemas (fetched by `make k8s-schemas`)."""

from __future__ import annotations

import copy

import kubernetes_validate
import pytest

from tests.k8s.crds import crd_errors, crd_schemas, monitoring_errors
from tests.k8s.kustomize import Object
from tests.k8s.manifests import OVERLAYS, find, overlay

VERSIONS = ("1.29.0", "1.30.0", "1.37.0")
STRIMZI = "kafka.strimzi.io/"
MONITORING = "monitoring.coreos.com/"


def _core(objects: list[Object]) -> list[Object]:
    return [o for o in objects if not o["apiVersion"].startswith((STRIMZI, MONITORING))]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", OVERLAYS)
def test_every_core_object_of_an_overlay_is_valid_for_kubernetes(name: str, version: str) -> None:
    objects = _core(overlay(name))
    assert {o["kind"] for o in objects} >= {"StatefulSet", "Deployment", "Service", "ConfigMap"}
    for obj in objects:
        kubernetes_validate.validate(obj, version, strict=True)


def test_a_misspelt_probe_is_refused_by_the_kubernetes_schemas() -> None:
    worker = copy.deepcopy(find(overlay("local"), "StatefulSet", "croupier-worker"))
    probe = worker["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]
    probe["httpGett"] = probe.pop("httpGet")
    with pytest.raises(kubernetes_validate.ValidationError, match="httpGett"):
        kubernetes_validate.validate(worker, VERSIONS[0], strict=True)


@pytest.mark.parametrize("name", OVERLAYS)
def test_every_strimzi_resource_of_an_overlay_is_valid_by_its_crd(name: str) -> None:
    schemas = crd_schemas()
    strimzi = [o for o in overlay(name) if o["apiVersion"].startswith(STRIMZI)]
    assert {o["kind"] for o in strimzi} == {"Kafka", "KafkaNodePool", "KafkaTopic", "KafkaUser"}
    for obj in strimzi:
        assert crd_errors(obj, schemas) == [], f"{obj['kind']} {obj['metadata']['name']}"


def test_a_wrong_strimzi_field_or_value_is_refused_by_its_crd() -> None:
    schemas = crd_schemas()
    kafka = copy.deepcopy(find(overlay("local"), "Kafka", "croupier"))
    kafka["spec"]["kafka"]["listeners"][0]["authentication"]["type"] = "scram"
    kafka["spec"]["kafka"]["listners"] = []
    user = copy.deepcopy(find(overlay("local"), "KafkaUser", "croupier"))
    user["spec"]["authorization"]["acls"][0]["resource"]["type"] = "transactional_id"
    assert crd_errors(kafka, schemas) == [
        "spec/kafka: Additional properties are not allowed ('listners' was unexpected)",
        "spec/kafka/listeners/0/authentication/type: 'scram' is not one of "
        "['tls', 'scram-sha-512', 'oauth', 'custom']",
    ]
    assert crd_errors(user, schemas) == [
        "spec/authorization/acls/0/resource/type: 'transactional_id' is not one of "
        "['topic', 'group', 'cluster', 'transactionalId']"
    ]


def test_every_monitoring_resource_is_valid_by_prometheus_operators_schemas() -> None:
    monitoring = [o for o in overlay("production") if o["apiVersion"].startswith(MONITORING)]
    assert {o["kind"] for o in monitoring} == {"ServiceMonitor", "PodMonitor", "PrometheusRule"}
    verdicts = monitoring_errors(monitoring)
    assert len(verdicts) == len(monitoring)
    assert set(verdicts.values()) == {None}, verdicts


def test_a_monitor_without_a_selector_is_refused_by_prometheus_operators_schemas() -> None:
    monitor = copy.deepcopy(find(overlay("local"), "ServiceMonitor", "croupier-worker"))
    del monitor["spec"]["selector"]
    monitor["metadata"]["name"] = "broken"
    rule = copy.deepcopy(find(overlay("local"), "PrometheusRule", "croupier"))
    rule["spec"]["groups"][0]["rules"][0]["for"] = 60
    verdicts = monitoring_errors([monitor, rule])
    assert "must have required property selector" in str(verdicts["ServiceMonitor/broken"])
    assert "must be string" in str(verdicts["PrometheusRule/croupier"])
