"""Committed output against the offline fold's records: missing, repeated, foreign or changed.

Pure: the caller reads the topics and runs the fold; this module only compares the bytes. Records
are compared byte for byte, since the contract makes the same input give byte-identical output.
When the topics no longer start at offset 0, a `Scope` (window.py) says which records the window
lets it judge; the others are counted as not checkable, with their reason, and are no finding.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal, assert_never

import msgspec

from schemas.codec import Invalid, decode_event, encode
from schemas.events import Event
from schemas.records import Adjustment, Record, Refund, Rejected, Settlement, TableStats
from services.audit.window import OUTPUT_CUT, Scope

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
    rejected_keys: list[bytes | None] | None = None
    """The Kafka key of each `rejected` message (the input's key), where known."""

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


class Unchecked(msgspec.Struct, frozen=True, kw_only=True):
    """Records of a topic that the window did not let the audit judge, and why."""

    topic: Role
    reason: str
    count: int


class Report(msgspec.Struct, frozen=True, kw_only=True):
    """Every finding of one comparison, with the number of records on each side, and what the
    window left uncheckable (records of rounds that cannot be checked are never findings)."""

    expected: int
    checked: int
    findings: list[Finding]
    unchecked: list[Unchecked] = []

    @property
    def not_checkable(self) -> int:
        """Records that could not be judged (their reasons are in `unchecked`)."""
        return sum(u.count for u in self.unchecked)

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
    bet_id: str = ""
    round_id: str = ""
    table_id: str = ""
    player_id: str = ""


class _RefundId(msgspec.Struct, kw_only=True):
    refund_id: str
    bet_id: str = ""
    round_id: str = ""
    table_id: str = ""
    player_id: str = ""


class _AdjustmentId(msgspec.Struct, kw_only=True):
    adjustment_id: str
    bet_id: str = ""
    round_id: str = ""
    table_id: str = ""
    player_id: str = ""


class _Dead(msgspec.Struct, kw_only=True):
    reason: str = ""
    topic: str = ""
    raw: str = ""


class _Board(msgspec.Struct, kw_only=True):
    round_id: str = ""


class _Stats(msgspec.Struct, kw_only=True):
    rounds: list[_Board] = []


_SETTLEMENT_ID: Final = msgspec.json.Decoder(_SettlementId)
_REFUND_ID: Final = msgspec.json.Decoder(_RefundId)
_ADJUSTMENT_ID: Final = msgspec.json.Decoder(_AdjustmentId)
_DEAD: Final = msgspec.json.Decoder(_Dead)
_STATS: Final = msgspec.json.Decoder(_Stats)
STATEFUL: Final = frozenset({"invalid_transition", "conflicting_duplicate", "duplicate_seq"})
"""Rejections that depend on what came before (the others depend on the message alone)."""
REPEATS: Final = frozenset({"conflicting_duplicate", "duplicate_seq"})

Head = _SettlementId | _RefundId | _AdjustmentId
Tally = dict[tuple[Role, str], int]


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


def compare(expected: Outputs, found: Outputs, scope: Scope | None = None) -> Report:
    """Every record missing, duplicated, unexpected or differing in `found` against `expected`,
    among the records `scope` lets the audit judge (all of them when it is None)."""
    scope = scope or Scope()
    tally: Tally = {}
    heads = {
        "settlements": (
            _heads(expected.settlements, _SETTLEMENT_ID),
            _heads(found.settlements, _SETTLEMENT_ID),
        ),
        "refunds": (_heads(expected.refunds, _REFUND_ID), _heads(found.refunds, _REFUND_ID)),
        "adjustments": (
            _heads(expected.adjustments, _ADJUSTMENT_ID),
            _heads(found.adjustments, _ADJUSTMENT_ID),
        ),
    }
    _link(scope, expected, found, heads)
    findings = [
        *_by_id("settlements", *heads["settlements"], scope, tally),
        *_by_id("refunds", *heads["refunds"], scope, tally),
        *_by_id("adjustments", *heads["adjustments"], scope, tally),
        *_by_content("rejected", expected.rejected, found, scope, tally),
        *_by_table(expected.table_stats, found.table_stats, scope, tally),
    ]
    unchecked = [
        Unchecked(topic=topic, reason=reason, count=count)
        for (topic, reason), count in sorted(tally.items())
    ]
    return Report(
        expected=expected.size(), checked=found.size(), findings=findings, unchecked=unchecked
    )


def _heads(
    raws: Sequence[bytes],
    decoder: msgspec.json.Decoder[Any],
) -> list[tuple[bytes, str, Head | None]]:
    """Each record with its id and, when readable, the fields that place it (round, player)."""
    out: list[tuple[bytes, str, Head | None]] = []
    for raw in raws:
        try:
            head = decoder.decode(raw)
        except msgspec.DecodeError:
            out.append((raw, f"{UNREADABLE} {_digest(raw)}", None))
            continue
        out.append((raw, _id(head), head))
    return out


def _link(
    scope: Scope,
    expected: Outputs,
    found: Outputs,
    heads: Mapping[str, tuple[list[tuple[bytes, str, Head | None]], ...]],
) -> None:
    """Before judging: rounds tied by a bet id to a round that cannot be checked, and rounds
    whose kept bet the committed output shows was judged against a removed one (a repeat or a
    seq already taken that the fold of the window did not see), cannot be checked either."""
    if not scope.inputs_cut:
        return
    computed = Counter(expected.rejected)
    for raw in found.rejected:
        dead = _dead(raw)
        if dead is None or dead.reason not in REPEATS or computed[raw]:
            continue
        event = _event(dead.raw)
        if event is not None:
            scope.doubt(event.table_id, event.round_id)
    scope.link(
        (head.table_id, head.round_id, head.bet_id)
        for pair in heads.values()
        for side in pair
        for _, _, head in side
        if head is not None
    )


def _by_id(
    topic: Role,
    expected: list[tuple[bytes, str, Head | None]],
    found: list[tuple[bytes, str, Head | None]],
    scope: Scope,
    tally: Tally,
) -> list[Finding]:
    """Records with an idempotency key: each id must be committed once, exactly as computed."""
    wanted = {key: (raw, head) for raw, key, head in expected}
    copies: dict[str, list[tuple[bytes, Head | None]]] = {}
    for raw, key, head in found:
        copies.setdefault(key, []).append((raw, head))
    findings: list[Finding] = []
    for key, (raw, head) in wanted.items():
        if key in copies:
            continue
        why = _why(scope, [head]) or (
            scope.output(topic, head.player_id.encode()) if head is not None else None
        )
        if why is not None:
            _count(tally, topic, why)
            continue
        findings.append(Finding(kind="missing", topic=topic, key=key, expected=_excerpt(raw)))
    for key, seen in copies.items():
        want = wanted.get(key)
        why = _why(scope, [head for _, head in seen] + ([want[1]] if want else []))
        if why is not None:
            _count(tally, topic, why)
            continue
        if len(seen) > 1:
            findings.append(Finding(kind="duplicated", topic=topic, key=key, count=len(seen) - 1))
        if want is None:
            findings.append(
                Finding(
                    kind="unexpected",
                    topic=topic,
                    key=key,
                    count=len(seen),
                    found=_excerpt(seen[0][0]),
                )
            )
            continue
        other = [raw for raw, _ in seen if raw != want[0]]
        if other:
            findings.append(
                Finding(
                    kind="differing",
                    topic=topic,
                    key=key,
                    count=len(other),
                    expected=_excerpt(want[0]),
                    found=_excerpt(other[0]),
                )
            )
    return findings


def _why(scope: Scope, heads: Iterable[Head | None]) -> str | None:
    """Why records of these rounds cannot be checked (the first reason), or None."""
    for head in heads:
        if head is not None:
            why = scope.round(head.table_id, head.round_id)
            if why is not None:
                return why
    return None


def _count(tally: Tally, topic: Role, reason: str, count: int = 1) -> None:
    tally[topic, reason] = tally.get((topic, reason), 0) + count


def _by_content(
    topic: Role, expected: Sequence[bytes], found: Outputs, scope: Scope, tally: Tally
) -> list[Finding]:
    """Records without an id (dead letters): the two sides must hold the same multiset.

    With a window: a rejection that depends on history is judged with its round; one that
    depends on its input alone may also have come from a removed input of the same bytes, so
    copies beyond those computed cannot be judged where the input lost records, and copies
    fewer than computed not where `rejected` lost records.
    """
    wanted = Counter(expected)
    seen = Counter(found.rejected)
    keys: dict[bytes, list[bytes | None]] = {}
    if found.rejected_keys is not None:
        for raw, source in zip(found.rejected, found.rejected_keys, strict=True):
            keys.setdefault(raw, []).append(source)
    findings: list[Finding] = []
    for raw in wanted.keys() | seen.keys():
        want, got = wanted[raw], seen[raw]
        key = _digest(raw)
        dead = _dead(raw) if scope.inputs_cut or got != want else None
        if scope.inputs_cut and dead is not None and dead.reason in STATEFUL:
            event = _event(dead.raw)
            why = None if event is None else scope.round(event.table_id, event.round_id)
            if why is not None:
                _count(tally, topic, why, max(want, got))
                continue
        if got < want:
            why = scope.output(topic, None)
            if why is not None:
                _count(tally, topic, OUTPUT_CUT, want - got)
                continue
            findings.append(
                Finding(
                    kind="missing", topic=topic, key=key, count=want - got, expected=_excerpt(raw)
                )
            )
        elif got > want:
            role = dead.topic if dead is not None else ""
            sources = keys.get(raw, [None])
            why = next((w for k in sources if (w := scope.input(role, k)) is not None), None)
            if why is not None and not (dead is not None and dead.reason in STATEFUL):
                _count(tally, topic, why, got - want)
                continue
            kind: Kind = "unexpected" if want == 0 else "duplicated"
            findings.append(
                Finding(kind=kind, topic=topic, key=key, count=got - want, found=_excerpt(raw))
            )
    findings.sort(key=lambda f: (f.kind, f.key))
    return findings


def _dead(raw: bytes) -> _Dead | None:
    try:
        return _DEAD.decode(raw)
    except msgspec.DecodeError:
        return None


def _event(raw: str) -> Event | None:
    """The event a dead letter kept, when it can be read (a repeat, a refused transition)."""
    _, event = decode_event(raw.encode("utf-8", errors="surrogateescape"))
    return None if isinstance(event, Invalid) else event


def _by_table(
    expected: Mapping[str, bytes], found: Mapping[str, bytes], scope: Scope, tally: Tally
) -> list[Finding]:
    """The last table-stats of each table must be the fold's final statistics of that table."""
    findings: list[Finding] = []
    for table, want in expected.items():
        got = found.get(table)
        if got == want:
            continue
        why = scope.board(table, _board(want))
        if why is None and got is None:
            why = scope.output("table-stats", table.encode())
        if why is not None:
            _count(tally, "table-stats", why)
        elif got is None:
            findings.append(
                Finding(kind="missing", topic="table-stats", key=table, expected=_excerpt(want))
            )
        else:
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
        if table in expected:
            continue
        why = scope.board(table, None)
        if why is not None:
            _count(tally, "table-stats", why)
            continue
        findings.append(
            Finding(kind="unexpected", topic="table-stats", key=table, found=_excerpt(got))
        )
    return findings


def _board(raw: bytes) -> list[str] | None:
    try:
        return [r.round_id for r in _STATS.decode(raw).rounds]
    except msgspec.DecodeError:
        return None


def _digest(raw: bytes) -> str:
    """A short, stable name for a record that has no id of its own."""
    return "sha1:" + hashlib.sha1(raw).hexdigest()[:16]


def _excerpt(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="backslashreplace")
    if len(text) <= EXCERPT:
        return text
    return f"{text[:EXCERPT]}... ({len(raw)} bytes)"


def _id(head: Head) -> str:
    match head:
        case _SettlementId():
            return head.settlement_id
        case _RefundId():
            return head.refund_id
        case _AdjustmentId():
            return head.adjustment_id
