"""Checking an archive before anything is read from it: the manifest chain and every file's hash.

The check covers every day from the archive's first through `to`: a fold needs the days before
`from` too (a round opened before the range is settled in it), so they must be as archived.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from services.archive.manifest import (
    MANIFEST,
    OPEN,
    RESTORE,
    Entry,
    Manifest,
    Open,
    Tampered,
    days_between,
    digest,
    next_day,
)
from services.archive.store import Storage
from services.archive.writer import sealed_days


@dataclass(frozen=True)
class Checked:
    """An archive whose chain and files hold: its days in order, each with its files."""

    first: str
    last: str
    files: dict[str, list[Entry]]

    def days(self, to: str | None = None) -> list[str]:
        return days_between(self.first, self.last if to is None else min(to, self.last))


def check(storage: Storage, start: str | None, to: str | None, *, within: bool = False) -> Checked:
    """The archive, checked from its first day through `to` (its last when None), and the range
    [start, to] inside it (`within`: the range cut to the archive's days, which must meet it);
    Tampered naming the first file that fails and what to do."""
    if not storage.exists(OPEN):
        raise Tampered(
            OPEN, "missing: this is not an archive, or its commit point was lost; " + RESTORE
        )
    try:
        state = msgspec.json.decode(storage.get(OPEN), type=Open)
    except msgspec.DecodeError as error:
        raise Tampered(OPEN, f"unreadable ({error}); {RESTORE}") from error
    sealed = sealed_days(storage)
    open_days = sorted({e.day for e in state.files})
    every = sealed + [d for d in open_days if not sealed or d > sealed[-1]]
    if not every:
        raise Tampered(
            OPEN, "the archive holds no day yet: run `croupier archive DIR --once` first"
        )
    first, last = every[0], every[-1]
    if within:
        if (start is not None and start > last) or (to is not None and to < first):
            raise Tampered(
                OPEN,
                f"the days {start or first} to {to or last} are outside the archive, which holds "
                f"{first} to {last}: give a period inside it, or archive the missing days first",
            )
        start = None if start is None else max(start, first)
        to = None if to is None else min(to, last)
    for name, day in (("--from", start), ("--to", to)):
        if day is not None and not first <= day <= last:
            raise Tampered(
                OPEN,
                f"{name} {day} is outside the archive, which holds {first} to {last}: give a day "
                "inside it, or archive the missing days first",
            )
    if start is not None and to is not None and start > to:
        raise Tampered(OPEN, f"--from {start} is after --to {to}")
    through = last if to is None else to
    files: dict[str, list[Entry]] = {}
    previous: str | None = None
    expected = first
    for day in sealed:
        path = f"days/{day}/{MANIFEST}"
        if day != expected:
            raise Tampered(
                f"days/{expected}/{MANIFEST}", f"missing (the chain goes on at {day}); {RESTORE}"
            )
        data = storage.get(path)
        try:
            manifest = msgspec.json.decode(data, type=Manifest)
        except msgspec.DecodeError as error:
            raise Tampered(path, f"unreadable ({error}); {RESTORE}") from error
        if manifest.day != day:
            raise Tampered(path, f"it is the manifest of {manifest.day}, not of {day}; {RESTORE}")
        if manifest.previous != previous:
            what = "the day before's manifest" if previous else "no previous day"
            raise Tampered(path, f"its previous SHA-256 does not match {what}; {RESTORE}")
        previous = digest(data)
        expected = next_day(day)
        if day <= through:
            files[day] = list(manifest.files)
    if sealed and (state.sealed is None or state.sealed < sealed[-1]):
        raise Tampered(
            OPEN,
            f"the archive stopped while sealing {sealed[-1]}: run `croupier archive DIR --once` "
            "on it to finish, then read it",
        )
    if state.previous != previous or state.sealed != (sealed[-1] if sealed else None):
        raise Tampered(
            OPEN, f"its previous SHA-256 does not match the last sealed day's manifest; {RESTORE}"
        )
    for e in state.files:
        if e.day <= through:
            files.setdefault(e.day, []).append(e)
    for day in sorted(files):
        for e in files[day]:
            content(storage, e)
    return Checked(first=first, last=last, files=files)


def content(storage: Storage, entry: Entry) -> bytes:
    """A data file's bytes, once its SHA-256 is the one its manifest names."""
    if not storage.exists(entry.path):
        raise Tampered(entry.path, f"missing; {RESTORE}")
    data = storage.get(entry.path)
    if digest(data) != entry.sha256:
        raise Tampered(entry.path, f"its SHA-256 differs from its manifest's; {RESTORE}")
    return data
