"""The principals that use croupier's topics and the least privilege each needs (pure data).

One source of truth for the ACLs the local secured broker gets and for the Kubernetes
`KafkaUser`s: both are rendered from `grants(settings)`. A role is what a client does, not who
runs it: `game` publishes round events and bets, `croupier` is the settlement worker, `wallet`
credits what croupier decided, `readside` is the projector and the live view, `auditor` replays
and verifies everything. Creating topics and altering their configuration is the operator's
(the broker's admin principal), never a role's.

Checked against what each component does, on a secured broker (tests/security):
- no role needs `IdempotentWrite` on the cluster: since Kafka 3.0 (KIP-679) `Write` on a topic
  allows an idempotent producer, and a transactional one needs only its transactional id;
- the worker checks the topics' configuration against the plan at start (`croupier topics`'
  describe, never alter), so it has `DescribeConfigs` on its topics;
- its group is one literal id: it joins it and commits offsets in its transactions (`Read`), and
  reads the committed offsets at a takeover (`Describe`); the projector and the live view assign
  partitions and keep their positions themselves, so they have no group; wallets and auditors
  may use consumer groups whose names start with their role and a dash (`wallet-*`,
  `auditor-*`), so that any standard consumer (Java `subscribe`, Sarama's `ConsumerGroup`,
  librdkafka) can share partitions and commit offsets;
- its transactional ids are `<prefix>-<p>`, the prefix with its dash.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from services.settings import Settings


class Role(StrEnum):
    GAME = "game"
    CROUPIER = "croupier"
    WALLET = "wallet"
    READSIDE = "readside"
    AUDITOR = "auditor"


Resource = Literal["topic", "group", "transactional_id", "cluster"]
Pattern = Literal["literal", "prefix"]
Operation = Literal["Read", "Write", "Describe", "DescribeConfigs", "IdempotentWrite"]


@dataclass(frozen=True, slots=True)
class Grant:
    """Allow `operations` on the resource `name` (matched literally or as a prefix)."""

    resource: Resource
    name: str
    pattern: Pattern
    operations: tuple[Operation, ...]


def _read(topics: tuple[str, ...]) -> tuple[Grant, ...]:
    return tuple(Grant("topic", t, "literal", ("Read", "Describe")) for t in topics)


def _write(topics: tuple[str, ...]) -> tuple[Grant, ...]:
    return tuple(Grant("topic", t, "literal", ("Write", "Describe")) for t in topics)


def _configs(topics: tuple[str, ...]) -> tuple[Grant, ...]:
    return tuple(Grant("topic", t, "literal", ("DescribeConfigs",)) for t in topics)


def _groups(role: Role) -> Grant:
    """Consumer groups named `<role>-*`: join, commit and read their offsets."""
    return Grant("group", f"{role}-", "prefix", ("Read", "Describe"))


def grants(settings: Settings) -> dict[Role, tuple[Grant, ...]]:
    """Every role's grants for the topics, group and transactional ids named by `settings`."""
    s = settings
    outputs = (*s.outputs, s.topic_state)
    paid = (s.topic_settlements, s.topic_refunds, s.topic_adjustments)
    every = s.inputs + outputs
    return {
        Role.GAME: _write(s.inputs),
        Role.CROUPIER: _read(s.inputs)
        + _write(outputs)
        + _read((s.topic_state,))
        + _configs(every)
        + (
            Grant("group", s.group_id, "literal", ("Read", "Describe")),
            Grant(
                "transactional_id", f"{s.transactional_prefix}-", "prefix", ("Write", "Describe")
            ),
        ),
        Role.WALLET: (*_read(paid), _groups(Role.WALLET)),
        Role.READSIDE: _read(s.projected),
        Role.AUDITOR: (*_read(every), _groups(Role.AUDITOR)),
    }
