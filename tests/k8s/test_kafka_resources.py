"""The KafkaTopics and KafkaUsers are the topic plan and the roles: one source of truth."""

from __future__ import annotations

from services.k8s.__main__ import BASE, rendered
from services.k8s.strimzi import CLUSTER, MIN_INSYNC, REPLICAS, resource_name
from services.roles import Grant, grants
from services.settings import Settings
from services.topics import plan
from tests.k8s.kustomize import load_documents
from tests.k8s.manifests import OVERLAYS, containers, env, environment, find, of_kind, overlay

RESOURCE = {"topic": "topic", "group": "group", "transactionalId": "transactional_id"}


def test_the_committed_topics_and_users_are_the_rendering_of_the_plan_and_the_roles() -> None:
    with environment({}):
        expected = rendered(Settings())
    for name, text in expected.items():
        assert (BASE / name).read_text() == text, (
            f"deploy/k8s/base/{name} is not the rendering of the plan: run `make k8s-manifests`"
        )


def test_every_planned_topic_is_a_kafka_topic_with_its_partitions_and_configuration() -> None:
    with environment({}):
        planned = plan(Settings())
    topics = {
        t["spec"].get("topicName", t["metadata"]["name"]): t
        for t in load_documents(BASE / "topics.yaml")
    }
    assert sorted(topics) == sorted(p.name for p in planned)
    for p in planned:
        spec = topics[p.name]["spec"]
        assert spec["partitions"] == p.partitions
        assert spec["replicas"] == REPLICAS == 3
        assert spec["config"] == {**p.config, "min.insync.replicas": str(MIN_INSYNC)}
        assert spec["config"]["min.insync.replicas"] == "2"
        assert topics[p.name]["metadata"]["labels"]["strimzi.io/cluster"] == CLUSTER


def test_the_compacted_and_the_oversized_topics_keep_their_own_configuration() -> None:
    topics = {
        t["metadata"]["name"]: t["spec"]["config"] for t in load_documents(BASE / "topics.yaml")
    }
    assert topics["settlement-state"]["cleanup.policy"] == "compact"
    assert topics["table-stats"]["cleanup.policy"] == "compact"
    assert "retention.ms" not in topics["settlement-state"]
    assert topics["rejected"]["max.message.bytes"] == str(8 * 1024 * 1024)
    assert topics["rounds"]["retention.ms"] == str(7 * 24 * 3600 * 1000)


def test_a_topic_name_that_is_no_kubernetes_name_is_kept_in_topic_name() -> None:
    assert resource_name("Table_Stats") == "table-stats"
    with environment({"CROUPIER_TOPIC_TABLE_STATS": "Table_Stats"}):
        docs = rendered(Settings())["topics.yaml"]
    assert 'name: "table-stats"' in docs and 'topicName: "Table_Stats"' in docs


def test_every_role_is_a_kafka_user_whose_acls_are_exactly_its_grants() -> None:
    with environment({}):
        roles = grants(Settings())
    users = {u["metadata"]["name"]: u for u in load_documents(BASE / "users.yaml")}
    assert sorted(users) == sorted(str(r) for r in roles)
    for role, granted in roles.items():
        spec = users[str(role)]["spec"]
        assert spec["authentication"] == {"type": "scram-sha-512"}
        assert spec["authorization"]["type"] == "simple"
        back = []
        for acl in spec["authorization"]["acls"]:
            resource = acl["resource"]
            if resource["type"] == "cluster":
                back.append(Grant("cluster", "kafka-cluster", "literal", tuple(acl["operations"])))
            else:
                back.append(
                    Grant(
                        RESOURCE[resource["type"]],
                        resource["name"],
                        resource["patternType"],
                        tuple(acl["operations"]),
                    )
                )
            assert acl["host"] == "*"
        assert tuple(back) == granted


def test_the_workers_environment_plans_exactly_the_topics_deployed() -> None:
    for name in OVERLAYS:
        objects = overlay(name)
        worker = find(objects, "StatefulSet", "croupier-worker")
        values = {
            k: v
            for k, v in env(worker["spec"]["template"]["spec"]["containers"][0]).items()
            if isinstance(v, str)
        }
        with environment(values):
            settings = Settings()
            planned = {p.name: p.partitions for p in plan(settings)}
        deployed = {
            t["spec"].get("topicName", t["metadata"]["name"]): t["spec"]["partitions"]
            for t in of_kind(objects, "KafkaTopic")
        }
        assert deployed == planned
        assert settings.replication_factor == REPLICAS


def test_every_client_connects_as_a_kafka_user_that_exists() -> None:
    for name in OVERLAYS:
        objects = overlay(name)
        users = {u["metadata"]["name"] for u in of_kind(objects, "KafkaUser")}
        clients = [
            env(c)["CROUPIER_KAFKA_USERNAME"]
            for _, c in containers(objects)
            if "KAFKA_BOOTSTRAP" in env(c)
        ]
        assert sorted(clients) == ["auditor", "croupier", "readside", "readside"]
        assert set(clients) <= users


def test_the_kafka_cluster_runs_kraft_node_pools_with_tls_scram_and_acls() -> None:
    for name in OVERLAYS:
        objects = overlay(name)
        kafka = find(objects, "Kafka", CLUSTER)
        annotations = kafka["metadata"]["annotations"]
        assert annotations["strimzi.io/node-pools"] == "enabled"
        assert annotations["strimzi.io/kraft"] == "enabled"
        assert "zookeeper" not in kafka["spec"]
        (listener,) = kafka["spec"]["kafka"]["listeners"]
        assert listener["tls"] is True
        assert listener["authentication"] == {"type": "scram-sha-512"}
        assert kafka["spec"]["kafka"]["authorization"] == {"type": "simple"}
        config = kafka["spec"]["kafka"]["config"]
        assert config["min.insync.replicas"] == 2
        assert config["default.replication.factor"] == 3
        assert config["transaction.state.log.min.isr"] == 2
        pools = of_kind(objects, "KafkaNodePool")
        assert sum(p["spec"]["replicas"] for p in pools if "broker" in p["spec"]["roles"]) == 3
        assert sum(p["spec"]["replicas"] for p in pools if "controller" in p["spec"]["roles"]) == 3
        assert all(p["metadata"]["labels"]["strimzi.io/cluster"] == CLUSTER for p in pools)
        bootstrap = f"{CLUSTER}-kafka-bootstrap:{listener['port']}"
        assert {
            env(c)["KAFKA_BOOTSTRAP"] for _, c in containers(objects) if "KAFKA_BOOTSTRAP" in env(c)
        } == {bootstrap}
