"""Committed output against the offline fold's records: missing, repeated, foreign or changed.

Pure: the caller reads the topics and runs the fold; this module only compares the bytes. Records
are compared byte for byte, since the contract makes the same input give byte-identical output.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal, assert_never

import msgspec

from schemas.codec import encode
from schemas.records import Adjustment, Record, Refund, Rejected, Settlement, TableStats

Kind = Literal["missing", "duplicated", "unexpected", "differing"]
Role = Literal["settlements", "refunds", "adjustments", "rejected", "table-stats"]
KINDS: Final[tuple[Kind, ...]] = ("missing", "duplicated", "unexpected", "differing")
UNREADABLE: Final = "<unreadable>"
EXCERPT: Final = 400


class Outputs(msgspec.Struct, frozen=True, kw_only=True):
    """The four output topics as bytes: every message of the record topics, the last table-stats."""

    settlements: list[bytes] = []
    refunds: list[bytes] = []
    adjustments: list[bytes] = []
    rejected: list[bytes] = []
    table_stats: dict[str, bytes] = {}

    def size(self) -> int:
        """How many records these outputs hold."""
        return (
            len(self.settlements)
            + len(self.refunds)
            + len(self.adjustments)
            + len(self.rejected)
            + len(self.table_stats)
        )


class Finding(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One disagreement: its kind, topic, the record's key and how many copies it concerns."""

    kind: Kind
    topic: Role
    key: str
    count: int = 1
    expected: str | None = None
    found: str | None = None


class Report(msgspec.Struct, frozen=True, kw_only=True):
    """Every finding of one comparison, with the number of records on each side."""

    expected: int
    checked: int
    findings: list[Finding]

    @property
    def ok(self) -> bool:
        return not self.findings

    def count(self, kind: Kind) -> int:
        """Records concerned by findings of a kind (extra copies for `duplicated`)."""
        return sum(f.count for f in self.findings if f.kind == kind)

    def counts(self) -> dict[str, int]:
        return {kind: self.count(kind) for kind in KINDS}


class _SettlementId(msgspec.Struct, kw_only=True):
    settlement_id: str


class _RefundId(msgspec.Struct, kw_only=True):
    refund_id: str


class _AdjustmentId(msgspec.Struct, kw_only=True):
    adjustment_id: str


_SETTLEMENT_ID: Final = msgspec.json.Decoder(_SettlementId)
_REFUND_ID: Final = msgspec.json.Decoder(_RefundId)
_ADJUSTMENT_ID: Final = msgspec.json.Decoder(_AdjustmentId)


def outputs(records: Iterable[Record], stats: Iterable[TableStats] = ()) -> Outputs:
    """What croupier must have committed: each record in its topic, one table-stats per table."""
    settlements: list[bytes] = []
    refunds: list[bytes] = []
    adjustments: list[bytes] = []
    rejected: list[bytes] = []
    boards: dict[str, bytes] = {}
    for record in records:
        match record:
            case Settlement():
                settlements.append(encode(record))
            case Refund():
                refunds.append(encode(record))
            case Adjustment():
                adjustments.append(encode(record))
            case Rejected():
                rejected.append(encode(record))
            case TableStats():
                boards[record.table_id] = encode(record)
            case _:
                assert_never(record)
    for board in stats:
        boards[board.table_id] = encode(board)
    return Outputs(
        settlements=settlements,
        refunds=refunds,
        adjustments=adjustments,
        rejected=rejected,
        table_stats=boards,
    )


def compare(expected: Outputs, found: Outputs) -> Report:
    """Every record missing, duplicated, unexpected or differing in `found` against `expected`."""
    findings = [
        *_by_id("settlements", expected.settlements, found.settlements, _SETTLEMENT_ID),
        *_by_id("refunds", expected.refunds, found.refunds, _REFUND_ID),
        *_by_id("adjustments", expected.adjustments, found.adjustments, _ADJUSTMENT_ID),
        *_by_content("rejected", expected.rejected, found.rejected),
        *_by_table(expected.table_stats, found.table_stats),
    ]
    return Report(expected=expected.size(), checked=found.size(), findings=findings)


def _by_id(
    topic: Role,
    expected: Sequence[bytes],
    found: Sequence[bytes],
    decoder: msgspec.json.Decoder[Any],
) -> list[Finding]:
    """Records with an idempotency key: each id must be committed once, exactly as computed."""
    wanted = {_id(raw, decoder): raw for raw in expected}
    copies: dict[str, list[bytes]] = {}
    for raw in found:
        copies.setdefault(_id(raw, decoder), []).append(raw)
    findings: list[Finding] = []
    for key, raw in wanted.items():
        if key not in copies:
            findings.append(Finding(kind="missing", topic=topic, key=key, expected=_excerpt(raw)))
    for key, seen in copies.items():
        if len(seen) > 1:
            findings.append(Finding(kind="duplicated", topic=topic, key=key, count=len(seen) - 1))
        want = wanted.get(key)
        if want is None:
            findings.append(
                Finding(
                    kind="unexpected",
                    topic=topic,
                    key=key,
                    count=len(seen),
                    found=_excerpt(seen[0]),
                )
            )
            continue
        other = [raw for raw in seen if raw != want]
        if other:
            findings.append(
                Finding(
                    kind="differing",
                    topic=topic,
                    key=key,
                    count=len(other),
                    expected=_excerpt(want),
                    found=_excerpt(other[0]),
                )
            )
    return findings


def _by_content(topic: Role, expected: Sequence[bytes], found: Sequence[bytes]) -> list[Finding]:
    """Records without an id (dead letters): the two sides must hold the same multiset."""
    wanted = Counter(expected)
    seen = Counter(found)
    findings: list[Finding] = []
    for raw in wanted.keys() | seen.keys():
        want, got = wanted[raw], seen[raw]
        key = _digest(raw)
        if got < want:
            findings.append(
                Finding(
                    kind="missing", topic=topic, key=key, count=want - got, expected=_excerpt(raw)
                )
            )
        elif got > want:
            kind: Kind = "unexpected" if want == 0 else "duplicated"
            findings.append(
                Finding(kind=kind, topic=topic, key=key, count=got - want, found=_excerpt(raw))
            )
    findings.sort(key=lambda f: (f.kind, f.key))
    return findings


def _by_table(expected: Mapping[str, bytes], found: Mapping[str, bytes]) -> list[Finding]:
    """The last table-stats of each table must be the fold's final statistics of that table."""
    findings: list[Finding] = []
    for table, want in expected.items():
        got = found.get(table)
        if got is None:
            findings.append(
                Finding(kind="missing", topic="table-stats", key=table, expected=_excerpt(want))
            )
        elif got != want:
            findings.append(
                Finding(
                    kind="differing",
                    topic="table-stats",
                    key=table,
                    expected=_excerpt(want),
                    found=_excerpt(got),
                )
            )
    for table, got in found.items():
        if table not in expected:
            findings.append(
                Finding(kind="unexpected", topic="table-stats", key=table, found=_excerpt(got))
            )
    return findings


def _id(raw: bytes, decoder: msgspec.json.Decoder[Any]) -> str:
    try:
        record = decoder.decode(raw)
    except msgspec.DecodeError:
        return f"{UNREADABLE} {_digest(raw)}"
    match record:
        case _SettlementId():
            return record.settlement_id
        case _RefundId():
            return record.refund_id
        case _AdjustmentId():
            return record.adjustment_id
    raise TypeError(f"no id decoder for {type(record).__name__}")


def _digest(raw: bytes) -> str:
    """A short, stable name for a record that has no id of its own."""
    return "sha1:" + hashlib.sha1(raw).hexdigest()[:16]


def _excerpt(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="backslashreplace")
    if len(text) <= EXCERPT:
        return text
    return f"{text[:EXCERPT]}... ({len(raw)} bytes)"
