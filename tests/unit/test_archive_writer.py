"""Writing the archive: which day a record goes to, when a day is sealed, and every record
archived exactly once whatever write a crash interrupts."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.archive import lines
from services.archive.manifest import Tampered, effective_day
from services.archive.source import open_archive
from services.archive.store import Directory
from services.archive.writer import GATHER, Writer
from services.audit.reader import Message
from tests.unit import archived

DAY = archived.DAY_MS
T0 = 1_764_460_800_000
"""2025-11-30T00:00:00Z."""


def _m(partition: int, offset: int, at: int, role: str = "accepted") -> tuple[str, Message]:
    value = b'{"n":%d}' % offset
    return role, Message(
        topic=role, partition=partition, offset=offset, key=None, value=value, timestamp=at
    )


def _everyone(caught: bool, partitions: int = 2) -> dict[tuple[str, int], bool]:
    """Whether each partition is at its end: `rejected` always (these tests write none to it)."""
    return {
        (r, p): caught or r == "rejected"
        for r in ("accepted", "rejected")
        for p in range(partitions)
    }


def _archived(root: Path) -> list[tuple[str, int, int]]:
    archive = open_archive(str(root), None, None)
    return [(day, line.p, line.o) for day, line in archive.records("accepted")]


@pytest.mark.parametrize(
    ("at", "last", "oldest", "day"),
    [
        (T0, None, None, "2025-11-30"),
        (T0 - 1, None, None, "2025-11-29"),  # the millisecond before midnight
        (T0 + DAY - 1, None, None, "2025-11-30"),
        (T0, "2025-12-01", None, "2025-12-01"),  # the clock set back: the partition's day stays
        (T0, None, "2025-12-02", "2025-12-02"),  # a sealed day never changes
        (T0 + 2 * DAY, "2025-12-01", "2025-11-30", "2025-12-02"),
        (-1, None, None, "1970-01-01"),  # no timestamp
    ],
)
def test_a_record_goes_to_its_timestamps_day_unless_a_later_one_binds_it(
    at: int, last: str | None, oldest: str | None, day: str
) -> None:
    assert effective_day(at, last, oldest) == day


def test_records_go_to_their_days_and_a_day_is_sealed_once_every_partition_passed_it(
    tmp_path: Path,
) -> None:
    writer = Writer(Directory(tmp_path))
    writer.commit([_m(0, 0, T0), _m(0, 1, T0 + DAY), _m(1, 0, T0 + 5)], _everyone(False))
    assert writer.state.sealed is None  # partition 1 may still hold records of the 30th
    writer.commit([_m(1, 1, T0 + 10)], _everyone(False))
    assert writer.state.sealed is None
    writer.commit([_m(1, 2, T0 + DAY + 1)], _everyone(False))
    assert writer.state.sealed == "2025-11-30"  # every partition is on the 1st now
    writer.commit([_m(1, 3, T0 + 7)], _everyone(True))  # late: goes to the first open day
    assert _archived(tmp_path) == [
        ("2025-11-30", 0, 0),
        ("2025-11-30", 1, 0),
        ("2025-11-30", 1, 1),
        ("2025-12-01", 0, 1),
        ("2025-12-01", 1, 2),
        ("2025-12-01", 1, 3),
    ]


def test_a_caught_up_partition_does_not_hold_a_day_open_and_empty_days_get_a_manifest(
    tmp_path: Path,
) -> None:
    writer = Writer(Directory(tmp_path))
    writer.commit([_m(0, 0, T0), _m(0, 1, T0 + 3 * DAY)], _everyone(True))
    assert writer.state.sealed == "2025-11-30"
    assert open_archive(str(tmp_path), None, None).checked.days() == [
        "2025-11-30",
        "2025-12-01",  # empty, not sealed yet: no day after them is
        "2025-12-02",
        "2025-12-03",
    ]
    writer.commit([_m(0, 2, T0 + 4 * DAY)], _everyone(True))
    assert writer.state.sealed == "2025-12-03"
    days = sorted(p.parent.name for p in tmp_path.glob("days/*/manifest.json"))
    assert days == ["2025-11-30", "2025-12-01", "2025-12-02", "2025-12-03"]
    assert list(tmp_path.glob("days/2025-12-0[12]/*.gz")) == []


def test_a_days_segments_are_merged_into_one_file_per_partition_when_it_is_sealed(
    tmp_path: Path,
) -> None:
    writer = Writer(Directory(tmp_path))
    for offset in range(4):
        writer.commit([_m(0, offset, T0 + offset)], _everyone(False, 1))
    assert len(list(tmp_path.glob("days/2025-11-30/accepted-0-*.jsonl.gz"))) == 4
    writer.commit([_m(0, 4, T0 + DAY)], _everyone(False, 1))
    assert [p.name for p in tmp_path.glob("days/2025-11-30/*.gz")] == ["accepted-0.jsonl.gz"]
    merged = (tmp_path / "days/2025-11-30/accepted-0.jsonl.gz").read_bytes()
    assert [line.value for line in lines.read(merged)] == [b'{"n":%d}' % o for o in range(4)]


def test_an_open_days_segments_are_gathered_into_one_file_every_gather_commits(
    tmp_path: Path,
) -> None:
    writer = Writer(Directory(tmp_path))
    for offset in range(GATHER + 3):
        writer.commit([_m(0, offset, T0 + offset)], _everyone(False, 1))
    names = sorted(p.name for p in tmp_path.glob("days/2025-11-30/*.gz"))
    gathered = f"accepted-0-{0:012d}-{GATHER - 1:012d}.jsonl.gz"
    assert names == [gathered] + [
        f"accepted-0-{o:012d}.jsonl.gz" for o in range(GATHER, GATHER + 3)
    ]
    assert [e.name for e in writer.state.files] == names
    assert [line.o for _, line in open_archive(str(tmp_path), None, None).records("accepted")] == (
        list(range(GATHER + 3))
    )


def test_the_position_moves_past_transaction_markers_the_consumer_read(tmp_path: Path) -> None:
    writer = Writer(Directory(tmp_path))
    writer.commit([_m(0, 0, T0)], _everyone(True, 1), {("accepted", 0): 2})  # 1: a marker
    assert writer.position("accepted", 0) == 2
    writer.commit([], _everyone(True, 1), {("accepted", 0): 4})  # an aborted batch and marker
    assert Writer(Directory(tmp_path)).position("accepted", 0) == 4  # committed, restarted
    writer.commit([_m(0, 0, T0)], _everyone(True, 1), {("accepted", 0): 1})  # never backwards
    assert writer.position("accepted", 0) == 4
    assert [line.o for _, line in open_archive(str(tmp_path), None, None).records("accepted")] == [
        0
    ]


class Crash(Exception):
    pass


class Fragile(Directory):
    """A directory whose writes and removals fail from the n-th on (a process killed there);
    atomic by renaming as Directory, without its fsyncs (no power is lost here: the test is
    quicker). It logs what kind of write each one was."""

    def __init__(self, root: Path, after: int = 10**9) -> None:
        super().__init__(root)
        self.left = after
        self.log: list[str] = []

    def _tick(self, kind: str) -> None:
        self.left -= 1
        if self.left < 0:
            raise Crash
        self.log.append(kind)

    def put(self, path: str, data: bytes) -> None:
        self._tick(_kind(path))
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.tmp")
        temporary.write_bytes(data)
        temporary.replace(target)

    def remove(self, path: str) -> None:
        self._tick("remove")
        super().remove(path)


def _kind(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    if name in ("open.json", "manifest.json"):
        return name
    return {1: "sealed day's file", 2: "segment", 3: "gathered segments"}[name.count("-")]


def _run(root: Path, messages: list[tuple[str, Message]], storage: Directory) -> None:
    """Archive the messages as the service does: from the writer's positions, batch by batch."""
    writer = Writer(storage, gather=3)
    rest = [
        (role, m) for role, m in messages if m.offset >= (writer.position(role, m.partition) or 0)
    ]
    for start in range(0, len(rest), 2):
        batch = rest[start : start + 2]
        writer.commit(batch, _everyone(start + 2 >= len(rest), 3))


def test_every_record_is_archived_exactly_once_whichever_write_a_crash_interrupts(
    tmp_path: Path,
) -> None:
    found = archived.topics(archived.stream(seed=3, tables=3, rounds=4), step_ms=3 * 3_600_000)
    messages = sorted(
        ((role, m) for role, ms in found.items() for m in ms), key=lambda rm: rm[1].timestamp
    )
    whole = {(role, m.partition, m.offset): m.value for role, m in messages}
    counted = Fragile(tmp_path / "whole")
    _run(tmp_path / "whole", messages, counted)
    by_kind: dict[str, list[int]] = {}
    for n, kind in enumerate(counted.log):
        by_kind.setdefault(kind, []).append(n)
    assert set(by_kind) == {
        "segment",
        "gathered segments",
        "open.json",
        "sealed day's file",
        "manifest.json",
        "remove",
    }
    # the first few writes of each kind, and some spread over the run: a crash at each
    crashes = sorted({n for ns in by_kind.values() for n in ns[:4] + ns[4::15]})
    for after in crashes:
        root = tmp_path / f"crash-{after}"
        with pytest.raises(Crash):
            _run(root, messages, Fragile(root, after))
        _run(root, messages, Fragile(root))  # restarted, no crash this time
        archive = open_archive(str(root), None, None)
        got = [
            (role, line.p, line.o, line.value)
            for role in ("accepted", "rejected")
            for _, line in archive.records(role)
        ]
        assert len(got) == len(whole)
        assert {(r, p, o): v for r, p, o, v in got} == whole


def test_an_archive_stopped_while_sealing_is_refused_until_the_archive_finishes_it(
    tmp_path: Path,
) -> None:
    writer = Writer(Directory(tmp_path))
    writer.commit([_m(0, 0, T0)], _everyone(True, 1))
    before = (tmp_path / "open.json").read_bytes()
    writer.commit([_m(0, 1, T0 + DAY)], _everyone(True, 1))  # seals the 30th
    (tmp_path / "open.json").write_bytes(before)  # as if killed before open.json was replaced
    with pytest.raises(Tampered, match="stopped while sealing 2025-11-30: run `croupier archive"):
        open_archive(str(tmp_path), None, None)
    Writer(Directory(tmp_path))  # started again: it finishes the sealing
    assert [line.o for _, line in open_archive(str(tmp_path), None, None).records("accepted")] == [
        0
    ]
