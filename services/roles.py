"""The principals that use croupier's topics and the least privilege each needs (pure data).

One source of truth for the ACLs the local secured broker gets and for the Kubernetes
`KafkaUser`s: both are rendered from `grants(settings)`. A role is what a client does, not who
runs it: `game` publishes round events and bets, `croupier` is the settlement worker, `wallet`
credits what croupier decided, `readside` is the projector and the live view, `auditor` replays
and verifies everything. Creating topics and altering their configuration is the operator's
(the broker's admin principal), never a role's.
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


def grants(settings: Settings) -> dict[Role, tuple[Grant, ...]]:
    """Every role's grants for the topics, group and transactional ids named by `settings`."""
    s = settings
    outputs = (*s.outputs, s.topic_state)
    paid = (s.topic_settlements, s.topic_refunds, s.topic_adjustments)
    every = s.inputs + outputs
    idempotent = Grant("cluster", "kafka-cluster", "literal", ("IdempotentWrite",))
    return {
        Role.GAME: (*_write(s.inputs), idempotent),
        Role.CROUPIER: _read(s.inputs)
        + _write(outputs)
        + _read((s.topic_state,))
        + (
            Grant("group", s.group_id, "prefix", ("Read", "Describe")),
            Grant("transactional_id", s.transactional_prefix, "prefix", ("Write", "Describe")),
            idempotent,
        ),
        Role.WALLET: _read(paid),
        Role.READSIDE: _read(s.outputs),
        Role.AUDITOR: _read(every),
    }
