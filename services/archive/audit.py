"""`croupier verify --archive DIR`: the archive's journals against the fold of their own inputs.

Each journal holds the inputs a task's fold accepted and the decisions its transaction committed,
so an archive verifies itself, with no broker: the inputs folded again (the very same fold, in
each partition's order) must give exactly the journals' decisions, byte for byte and in order,
partition by partition, and reject none of them (an accepted input is never a rejected one). The
archived `rejected` records are read and counted by reason: each is an input refused, which no
fold can check without the input's own topic. The days before `--from` are folded and compared
too (a round opened before the range is decided in it) but only the range's journals count.
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from itertools import chain
from typing import assert_never

import msgspec

from schemas.codec import encode
from schemas.records import Adjustment, Record, Refund, Rejected, Settlement, TableStats
from services.archive.source import Archive
from services.settlement.fold import Fold


class Difference(msgspec.Struct, frozen=True, kw_only=True):
    """A decision the fold and a journal do not agree on (None: the other side has none)."""

    day: str
    partition: int
    expected: str | None
    found: str | None


class Verdict(msgspec.Struct, kw_only=True):
    start: str
    to: str
    journals: int = 0
    inputs: int = 0
    decisions: int = 0
    agreed: int = 0
    rejected_by_fold: int = 0
    rejected: dict[str, int] = {}
    differences: list[Difference] = []

    @property
    def ok(self) -> bool:
        return self.agreed == self.decisions and self.rejected_by_fold == 0


_rejected = msgspec.json.Decoder(Rejected).decode


def verify(archive: Archive, fold: Fold, limit: int = 20) -> Verdict:
    """Fold the archived inputs and compare with the archived decisions (`limit` differences
    are kept; all are counted in `decisions` against `agreed`)."""
    verdict = Verdict(start=archive.start, to=archive.to)
    waiting: dict[int, deque[bytes]] = defaultdict(deque)
    out: list[Record] = []
    everything = chain(archive.journals(context=True), archive.journals())
    for day, partition, parts in everything:
        counted = day >= archive.start
        for raw in parts.inputs:
            fold.feed(None, bytes(raw), out)
        for record in out:
            match record:
                case Settlement() | Refund() | Adjustment():
                    waiting[partition].append(encode(record))
                case Rejected():
                    verdict.rejected_by_fold += counted
                case TableStats():
                    pass
                case _:
                    assert_never(record)
        out.clear()
        queue = waiting[partition]
        for raw in parts.decisions:
            expected = queue.popleft() if queue else None
            if not counted:
                continue
            verdict.decisions += 1
            if expected == bytes(raw):
                verdict.agreed += 1
            else:
                _differ(verdict, limit, day, partition, expected, bytes(raw))
        if counted:
            verdict.journals += 1
            verdict.inputs += len(parts.inputs)
    for partition, queue in sorted(waiting.items()):
        for expected in queue:
            verdict.decisions += 1
            _differ(verdict, limit, archive.to, partition, expected, None)
    reasons: Counter[str] = Counter()
    for _, line in archive.records("rejected"):
        reasons[_rejected(line.value).reason] += 1
    verdict.rejected = dict(sorted(reasons.items()))
    return verdict


def _differ(
    verdict: Verdict,
    limit: int,
    day: str,
    partition: int,
    expected: bytes | None,
    found: bytes | None,
) -> None:
    if len(verdict.differences) < limit:
        verdict.differences.append(
            Difference(
                day=day,
                partition=partition,
                expected=None if expected is None else expected.decode(),
                found=None if found is None else found.decode(),
            )
        )
