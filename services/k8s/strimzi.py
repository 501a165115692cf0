"""Strimzi `KafkaTopic`s and `KafkaUser`s from croupier's topic plan and roles (pure).

The topics are `services.topics.plan(settings)` exactly, as `croupier topics` creates them, with
the cluster's replication on top: three replicas and `min.insync.replicas` two, so one broker may
be lost without stopping a write. The users are `services.roles.grants(settings)`: one
`KafkaUser` per role, SCRAM-SHA-512, its ACLs the role's grants and nothing more.
"""

from __future__ import annotations

import re
from typing import Final

from services.k8s.emit import Data
from services.roles import Grant, grants
from services.settings import Settings
from services.topics import plan

API: Final = "kafka.strimzi.io/v1beta2"
CLUSTER: Final = "croupier"
"""The `Kafka` resource's name: its bootstrap service is `croupier-kafka-bootstrap`."""
REPLICAS: Final = 3
MIN_INSYNC: Final = 2
PART_OF: Final = {"app.kubernetes.io/part-of": "croupier"}

_RESOURCE: Final = {
    "topic": "topic",
    "group": "group",
    "transactional_id": "transactionalId",
    "cluster": "cluster",
}


def resource_name(name: str) -> str:
    """A Kubernetes object name (RFC 1123 subdomain) for a Kafka name such as a topic's."""
    lowered = re.sub(r"[^a-z0-9.-]+", "-", name.lower()).strip("-.")
    return lowered[:253] or "topic"


def _labels() -> dict[str, Data]:
    return {"strimzi.io/cluster": CLUSTER, **PART_OF}


def topics(settings: Settings) -> list[Data]:
    """One `KafkaTopic` per planned topic: partitions and every planned configuration key."""
    found: list[Data] = []
    for topic in plan(settings):
        name = resource_name(topic.name)
        spec: dict[str, Data] = {}
        if name != topic.name:
            spec["topicName"] = topic.name
        config = {**dict(sorted(topic.config.items())), "min.insync.replicas": str(MIN_INSYNC)}
        spec |= {"partitions": topic.partitions, "replicas": REPLICAS, "config": config}
        found.append(
            {
                "apiVersion": API,
                "kind": "KafkaTopic",
                "metadata": {"name": name, "labels": _labels()},
                "spec": spec,
            }
        )
    return found


def acl(grant: Grant) -> dict[str, Data]:
    """A Strimzi `simple` authorization rule for one grant."""
    resource: dict[str, Data] = {"type": _RESOURCE[grant.resource]}
    if grant.resource != "cluster":
        resource |= {"name": grant.name, "patternType": grant.pattern}
    return {"resource": resource, "operations": list(grant.operations), "host": "*"}


def users(settings: Settings) -> list[Data]:
    """One `KafkaUser` per role; Strimzi writes its password to the Secret of the same name."""
    return [
        {
            "apiVersion": API,
            "kind": "KafkaUser",
            "metadata": {"name": str(role), "labels": _labels()},
            "spec": {
                "authentication": {"type": "scram-sha-512"},
                "authorization": {"type": "simple", "acls": [acl(g) for g in granted]},
            },
        }
        for role, granted in grants(settings).items()
    ]
