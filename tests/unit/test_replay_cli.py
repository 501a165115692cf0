"""`croupier replay` (contract section 7): files or stdin in, JSON Lines out, no broker."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec

from tests.unit.builders import bet, round_event

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "services" / "samples" / "sample.jsonl"


def _replay(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "services.cli", "replay", *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        check=False,
    )


def test_replay_reads_standard_input_and_writes_one_record_per_line() -> None:
    events = [
        round_event("opened", game="thai-hilo"),
        bet(1, "hilo_11", stake=50),
        round_event("betting_closed", last_seq=1),
        round_event("result", dice=[5, 5, 1]),
        b"not json",
    ]
    done = _replay("-", stdin=b"\n".join(events) + b"\n")
    assert done.returncode == 0
    settlement, rejected = map(msgspec.json.decode, done.stdout.splitlines())
    assert (settlement["type"], settlement["result"], settlement["payout"]) == (
        "settlement",
        "win",
        350,
    )
    assert (rejected["type"], rejected["reason"], rejected["raw"]) == (
        "rejected",
        "malformed",
        "not json",
    )


def test_replay_with_stats_ends_with_one_table_stats_per_table() -> None:
    done = _replay("--stats", str(SAMPLE))
    records = [msgspec.json.decode(line) for line in done.stdout.splitlines()]
    stats = [r for r in records if r["type"] == "table_stats"]
    assert [r["table_id"] for r in stats] == ["T000", "T001", "T002"]
    assert all(r["type"] == "table_stats" for r in records[-3:])
    assert {r["game"] for r in stats} == {"sicbo", "thai-hilo", "xocdia"}


def test_replaying_the_same_file_twice_gives_identical_bytes() -> None:
    assert _replay("--stats", str(SAMPLE)).stdout == _replay("--stats", str(SAMPLE)).stdout


def test_a_missing_file_is_a_clear_error_not_a_traceback() -> None:
    done = _replay("no-such-file.jsonl")
    assert done.returncode == 2
    assert b"no such file: no-such-file.jsonl" in done.stderr
    assert b"Traceback" not in done.stderr
