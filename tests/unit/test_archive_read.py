"""The auditor's commands on an archive: the same figures as from the stream itself, byte for
byte; a range folds the days before it for context; verify folds the archived inputs against the
archived decisions; a tampered archive is refused with exit 2."""

from __future__ import annotations

import dataclasses
import gzip
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import msgspec
import pytest

from schemas.codec import encode
from schemas.records import Record, Rejected, TableStats
from services.archive.audit import verify
from services.archive.source import open_archive
from services.reports.command import FORMATS
from services.reports.figures import Report
from services.settlement.fold import Fold
from tests.unit import archived

ROOT = Path(__file__).resolve().parents[2]
MESSAGES = archived.stream()


@pytest.fixture(scope="module")
def archive_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("archive")
    archived.archive(root, archived.topics(MESSAGES))
    return root


@pytest.fixture(scope="module")
def stream_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("stream") / "stream.jsonl"
    path.write_bytes(b"".join(raw + b"\n" for _, raw in MESSAGES))
    return path


def _croupier(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "services.cli", *args], capture_output=True, cwd=ROOT, check=False
    )


def test_report_of_the_archive_is_the_report_of_the_stream_byte_for_byte(
    archive_dir: Path, stream_file: Path
) -> None:
    for fmt in ("json", "text"):
        of_stream = _croupier("report", "--format", fmt, str(stream_file))
        of_archive = _croupier("report", "--format", fmt, "--archive", str(archive_dir))
        assert of_stream.returncode == of_archive.returncode == 0, of_archive.stderr
        assert of_archive.stdout == of_stream.stdout
    assert b"corrected" in of_stream.stdout  # the stream has corrections and voids to report


def _by_table(records: list[bytes]) -> dict[str, list[bytes]]:
    tables: dict[str, list[bytes]] = defaultdict(list)
    for line in records:
        tables[msgspec.json.decode(line)["table_id"]].append(line)
    return dict(tables)


def test_replay_of_the_archive_decides_each_table_as_the_stream_does(
    archive_dir: Path, stream_file: Path
) -> None:
    of_stream = _croupier("replay", str(stream_file)).stdout.splitlines()
    of_archive = _croupier("replay", "--archive", str(archive_dir)).stdout.splitlines()
    decided = [line for line in of_stream if not line.startswith(b'{"type":"rejected"')]
    assert len(decided) < len(of_stream)  # the stream has rejections, which are not inputs
    assert len(of_archive) == len(decided) > 100
    assert _by_table(of_archive) == _by_table(decided)


def _report(root: Path, start: str | None, to: str | None) -> Report:
    return open_archive(str(root), start, to).report(Fold(journal=True))


def test_reports_of_consecutive_ranges_add_up_to_the_report_of_the_whole(
    archive_dir: Path,
) -> None:
    days = open_archive(str(archive_dir), None, None).checked.days()
    whole = FORMATS["json"](_report(archive_dir, None, None))
    for cut in range(1, len(days)):
        before = _report(archive_dir, None, days[cut - 1])
        before.add(_report(archive_dir, days[cut], None))
        assert FORMATS["json"](before) == whole


def test_verify_finds_the_archived_decisions_are_the_fold_of_the_archived_inputs(
    archive_dir: Path,
) -> None:
    verdict = verify(open_archive(str(archive_dir), None, None), Fold())
    assert verdict.ok
    assert verdict.decisions == verdict.agreed > 100
    assert verdict.rejected_by_fold == 0
    assert sum(verdict.rejected.values()) == len(archived.topics(MESSAGES)["rejected"])
    done = _croupier("verify", "--archive", str(archive_dir))
    assert done.returncode == 0
    assert done.stdout.startswith(b"OK: the archive from ")


def test_verify_names_a_decision_the_fold_does_not_make(tmp_path: Path) -> None:
    found = archived.topics(MESSAGES)
    changed = 0
    for n, m in enumerate(found["accepted"]):
        if b'"payout":' in m.value and not changed:
            value = m.value.replace(b'"payout":', b'"payout":1', 1)
            found["accepted"][n] = dataclasses.replace(m, value=value)
            changed += 1
    archived.archive(tmp_path, found)
    verdict = verify(open_archive(str(tmp_path), None, None), Fold())
    assert not verdict.ok
    assert verdict.decisions == verdict.agreed + 1
    (difference,) = verdict.differences
    assert difference.found is not None and difference.expected is not None
    assert difference.found.replace('"payout":1', '"payout":', 1) == difference.expected
    assert _croupier("verify", "--archive", str(tmp_path)).returncode == 1


def test_a_flipped_byte_is_refused_by_every_command_with_exit_2(
    archive_dir: Path, tmp_path: Path
) -> None:
    root = tmp_path / "archive"
    subprocess.run(["cp", "-r", str(archive_dir), str(root)], check=True)
    target = sorted(root.glob("days/*/accepted-0.jsonl.gz"))[0]
    lines = gzip.decompress(target.read_bytes())
    target.write_bytes(gzip.compress(lines.replace(b'"stake":', b'"stake":9', 1), mtime=0))
    for command in ("report", "replay", "verify", "integrity"):
        done = _croupier(command, "--archive", str(root))
        assert done.returncode == 2
        assert done.stdout == b""
        message = done.stderr.decode()
        assert str(target.relative_to(root)) in message
        assert "restore it from a copy" in message


def test_a_fold_of_the_archived_inputs_rejects_none_of_them(archive_dir: Path) -> None:
    fold = Fold()
    out: list[Record] = []
    for raw in open_archive(str(archive_dir), None, None).inputs():
        fold.feed(None, raw, out)
    assert not [r for r in out if isinstance(r, Rejected)]
    assert [encode(r) for r in out if not isinstance(r, TableStats)]


def _integrity(*args: str) -> dict[tuple[str, str, str, str], int]:
    done = _croupier("integrity", "--json", *args)
    assert done.returncode == 0, done.stderr
    found = [msgspec.json.decode(line) for line in done.stdout.splitlines()]
    return {(f["scope"], f["id"], f["game"], f["test"]): f["rounds"] for f in found}


def test_integrity_of_the_archive_is_the_streams_and_ranges_split_its_rounds(
    archive_dir: Path, stream_file: Path
) -> None:
    whole = _croupier("integrity", "--json", "--archive", str(archive_dir))
    assert whole.stdout == _croupier("integrity", "--json", str(stream_file)).stdout
    counted = _integrity("--archive", str(archive_dir))
    assert sum(counted.values()) > 50
    days = open_archive(str(archive_dir), None, None).checked.days()
    cut = len(days) // 2
    before = _integrity("--archive", str(archive_dir), "--to", days[cut - 1])
    after = _integrity("--archive", str(archive_dir), "--from", days[cut])
    assert 0 < sum(before.values()) < sum(counted.values())
    assert {k: before.get(k, 0) + after.get(k, 0) for k in counted} == counted


def test_the_integrity_page_of_the_archive_is_the_streams(
    archive_dir: Path, stream_file: Path, tmp_path: Path
) -> None:
    pages = tmp_path / "archive.html", tmp_path / "stream.html"
    archived = _croupier("integrity", "--archive", str(archive_dir), "--html", str(pages[0]))
    streamed = _croupier("integrity", str(stream_file), "--html", str(pages[1]))
    assert archived.returncode == streamed.returncode == 0, archived.stderr + streamed.stderr
    assert archived.stdout == streamed.stdout  # the lines still printed
    assert pages[0].read_bytes() == pages[1].read_bytes()
    assert pages[0].read_bytes().count(b"<figure ") == len(archived.stdout.splitlines()) > 0
