"""`croupier report --from --to --day-starts --tz`: the period of a file or of an archive alike,
and each unusable argument refused with its reason and exit code 2."""

from __future__ import annotations

import dataclasses
import json
from datetime import date, time
from pathlib import Path

import pytest

from services.cli import main
from services.reports.command import build
from services.reports.days import Period
from services.reports.render import as_json
from tests.unit import archived
from tests.unit.test_report_days import MALTA, _lines

PERIOD = ("--from", "2026-03-28", "--to", "2026-03-29", "--day-starts", "06:00", "--tz", MALTA)


@pytest.fixture
def replay_file(tmp_path: Path) -> Path:
    path = tmp_path / "rounds.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in _lines()))
    return path


def test_the_report_of_a_period_of_gaming_days_is_the_core_s(
    replay_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "--format", "json", *PERIOD, str(replay_file)]) == 0
    period = Period(date(2026, 3, 28), date(2026, 3, 29), time(6), MALTA)
    printed = capsys.readouterr().out
    assert printed == as_json(build(_lines(), horizon=200), period)
    assert [r["day"] for r in json.loads(printed)["rounds"]] == ["2026-03-28", "2026-03-29"]


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (("--tz", "Europe/Atlantis"), "time zone 'Europe/Atlantis': no such zone"),
        (("--day-starts", "6am"), "day starts '6am': expected HH:MM"),
        (("--day-starts", "06:05"), "on a quarter hour"),
        (("--from", "2026-02-30"), "'2026-02-30' is no date (YYYY-MM-DD)"),
    ],
)
def test_an_unusable_zone_start_or_day_is_refused_with_exit_2(
    replay_file: Path, capsys: pytest.CaptureFixture[str], given: tuple[str, str], said: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["report", *given, str(replay_file)])
    assert exited.value.code == 2
    assert said in capsys.readouterr().err


def test_a_period_that_ends_before_it_starts_is_refused_with_exit_2(
    replay_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "--from", "2026-03-29", "--to", "2026-03-28", str(replay_file)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "the period's first day 2026-03-29 is after its last 2026-03-28" in captured.err


def _archive_of_the_stream_as_it_arrived(root: Path) -> None:
    """The archive of `archived.stream()`, its inputs a second apart from 12:00 UTC on the day
    of their `at` (29 November 2026), as the workers write inputs on their arrival."""
    found = archived.topics(archived.stream(), step_ms=1000)
    a_year = 365 * archived.DAY_MS  # from 29 November 2025
    archived.archive(
        root,
        {
            role: [dataclasses.replace(m, timestamp=m.timestamp + a_year) for m in messages]
            for role, messages in found.items()
        },
    )


def test_the_period_of_an_archive_is_the_period_of_its_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The stream's rounds are 12:00 to 17:01 UTC, 29 November 2026, 20:00 to 01:01 in Manila
    (+08:00): the gaming day from 18:00 holds them all; with days from 22:00, those before
    22:00 (14:00 UTC) are in the day that started on 28 November."""
    _archive_of_the_stream_as_it_arrived(tmp_path / "archive")
    (tmp_path / "stream.jsonl").write_bytes(b"".join(raw + b"\n" for _, raw in archived.stream()))
    for starts, days in (("18:00", ["2026-11-29"]), ("22:00", ["2026-11-28", "2026-11-29"])):
        period = ("--from", "2026-11-28", "--to", "2026-11-29", "--tz", "Asia/Manila")
        chosen = ("--format", "json", "--day-starts", starts, *period)
        assert main(["report", *chosen, str(tmp_path / "stream.jsonl")]) == 0
        of_stream = capsys.readouterr().out
        assert main(["report", *chosen, "--archive", str(tmp_path / "archive")]) == 0
        assert capsys.readouterr().out == of_stream
        assert sorted({r["day"] for r in json.loads(of_stream)["rounds"]}) == days


def test_a_period_outside_the_archive_is_refused_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _archive_of_the_stream_as_it_arrived(tmp_path)
    assert main(["report", "--from", "2027-01-01", "--archive", str(tmp_path)]) == 2
    assert "outside the archive, which holds 2026-11-29 to 2026-11-29" in capsys.readouterr().err
