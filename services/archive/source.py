"""Reading a checked archive: its records by day, and the inputs of its journals for a fold.

Within a day, each partition's file is read whole, partition after partition: every input of a
table is in one partition of `accepted`, in the order its task's fold accepted it, so a fold of
the archived inputs decides each table as the workers did (the tables' interleaving differs from
the topics', which no table's records depend on).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import msgspec

from schemas import journal
from services.archive import lines
from services.archive.check import Checked, check, content
from services.archive.store import Storage, open_storage
from services.reports.command import build
from services.reports.figures import Report
from services.settlement.fold import Fold


class Parts(msgspec.Struct, frozen=True):
    """A journal's inputs and decisions as the bytes it holds."""

    inputs: tuple[msgspec.Raw, ...] = ()
    decisions: tuple[msgspec.Raw, ...] = ()


_parts = msgspec.json.Decoder(Parts).decode


def parts(value: bytes) -> Parts:
    """A record of `accepted`: a journal, or an input written alone."""
    if value.startswith(journal.PREFIX):
        return _parts(value)
    return Parts(inputs=(msgspec.Raw(value),))


@dataclass(frozen=True)
class Archive:
    """An archive checked through `to`, to be read from its first day; `start` begins the range
    (the days before it are read only for the fold's context)."""

    storage: Storage
    checked: Checked
    start: str
    to: str

    def records(self, role: str, context: bool = False) -> Iterator[tuple[str, lines.Line]]:
        """Every archived record of a topic in the range, with its day; or (`context`) of the
        days before it."""
        for day in self.checked.days(self.to):
            if (day < self.start) != context:
                continue
            entries = sorted(
                (e for e in self.checked.files.get(day, ()) if e.topic == role),
                key=lambda e: (e.partition, e.first),
            )
            for e in entries:
                for line in lines.read(content(self.storage, e)):
                    yield day, line

    def journals(self, context: bool = False) -> Iterator[tuple[str, int, Parts]]:
        """Each journal (day, partition, parts), in order: in the range, or before it."""
        for day, line in self.records("accepted", context):
            yield day, line.p, parts(line.value)

    def inputs(self, context: bool = False) -> Iterator[bytes]:
        """The accepted inputs verbatim: those in the range, or (`context`) those before it."""
        for _, _, found in self.journals(context):
            yield from (bytes(raw) for raw in found.inputs)

    def warm(self, fold: Fold) -> Fold:
        """The fold, fed the inputs before the range (what it decides of them is dropped)."""
        for raw in self.inputs(context=True):
            fold.feed(None, raw)
        if fold.journal is not None:
            fold.journal.clear()
        return fold

    def report(self, fold: Fold) -> Report:
        """The regulator's report of the range: the fold (keeping its journal) and the report
        read the days before it first, the report keeping of them only what it knows of their
        rounds (game, outcome, corrections counted), none of their figures."""
        before = build(self.inputs(context=True), fold.horizon, fold=fold)
        after = Report(games=before.games, outcomes=before.outcomes, numbers=before.numbers)
        return build(self.inputs(), fold.horizon, fold=fold, report=after)


def open_archive(where: str, start: str | None, to: str | None, *, within: bool = False) -> Archive:
    """The archive at `where`, checked (Tampered when it fails) for the range [start, to]; the
    range is the whole archive where a bound is None (`within`: cut to the archive's days)."""
    storage = open_storage(where)
    checked = check(storage, start, to, within=within)
    return Archive(
        storage=storage,
        checked=checked,
        start=checked.first if start is None else max(start, checked.first),
        to=checked.last if to is None else min(to, checked.last),
    )
