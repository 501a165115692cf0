"""Where each record of the fold goes: its topic, key and partition (pure).

Decisions are keyed by player, so that a wallet reads a player's records in order from one
partition; table statistics by table. Their partition is Kafka's default for the key (murmur2,
as the Java client; the producer computes it). A rejected input keeps the key it came with; one
without a key goes to the partition of the task that read it, so that a replay of a partition's
rejections finds them in one place. The journal and the state go to the task's own partition.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import assert_never

from schemas.records import Adjustment, Record, Refund, Rejected, Settlement, TableStats
from services.settings import Settings

Headers = list[tuple[str, str | bytes | None]]
Message = tuple[str, int | None, bytes | None, bytes | None, Headers | None]
"""topic, partition (None: the key's partition), key, value (None: a tombstone) and headers (a
forwarded input's own; None for what croupier writes)."""


@dataclass(frozen=True, kw_only=True)
class Topics:
    """The names of the outputs a task writes."""

    settlements: str
    refunds: str
    adjustments: str
    rejected: str
    table_stats: str
    accepted: str
    state: str
    rejected_partitions: int
    input_partitions: int
    """Of `rounds` and of `bets` (co-partitioned): where a table's inputs belong depends on it."""

    @classmethod
    def of(cls, s: Settings, rejected_partitions: int, input_partitions: int) -> Topics:
        return cls(
            settlements=s.topic_settlements,
            refunds=s.topic_refunds,
            adjustments=s.topic_adjustments,
            rejected=s.topic_rejected,
            table_stats=s.topic_table_stats,
            accepted=s.topic_accepted,
            state=s.topic_state,
            rejected_partitions=rejected_partitions,
            input_partitions=input_partitions,
        )


def route(record: Record, value: bytes, topics: Topics, task: int, key: bytes | None) -> Message:
    """The message of one record of task `task`, encoded as `value`; `key` is the key of the
    input it came from."""
    match record:
        case Settlement():
            return (topics.settlements, None, record.player_id.encode(), value, None)
        case Refund():
            return (topics.refunds, None, record.player_id.encode(), value, None)
        case Adjustment():
            return (topics.adjustments, None, record.player_id.encode(), value, None)
        case Rejected():
            partition = None if key is not None else task % topics.rejected_partitions
            return (topics.rejected, partition, key, value, None)
        case TableStats():
            return (topics.table_stats, None, record.table_id.encode(), value, None)
        case _:
            assert_never(record)


def count(records: list[Record], decisions: Counter[str], rejections: Counter[str]) -> None:
    """Count a batch's decisions by kind (`settlement`, `refund:<reason>`,
    `adjustment:<cause>`) and its rejections by reason."""
    settled = 0
    for record in records:
        match record:
            case Settlement():
                settled += 1
            case Refund():
                decisions[f"refund:{record.reason}"] += 1
            case Adjustment():
                decisions[f"adjustment:{record.cause}"] += 1
            case Rejected():
                rejections[record.reason] += 1
            case TableStats():
                pass
            case _:
                assert_never(record)
    if settled:
        decisions["settlement"] += settled
