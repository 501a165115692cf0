"""The same seed gives the same events, byte for byte; time is simulated, never the wall clock."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from pathlib import Path

import pytest

from services.cli import main
from services.simulation.simulator import Config, Simulation


def _simulate(path: Path, *options: str) -> bytes:
    code = main(["simulate", "--out", str(path), *options])
    assert code == 0
    return path.read_bytes()


def test_two_runs_with_the_same_seed_write_byte_identical_files(tmp_path: Path) -> None:
    options = ("--tables", "4", "--players", "30", "--rounds", "25", "--seed", "42")
    first = _simulate(tmp_path / "a.jsonl", *options)
    second = _simulate(tmp_path / "b.jsonl", *options)
    assert first == second
    assert first.count(b"\n") > 1000


def test_another_seed_gives_other_events(tmp_path: Path) -> None:
    options = ("--tables", "3", "--players", "10", "--rounds", "5")
    assert _simulate(tmp_path / "a.jsonl", *options, "--seed", "1") != _simulate(
        tmp_path / "b.jsonl", *options, "--seed", "2"
    )


def test_the_start_option_sets_the_simulated_time(tmp_path: Path) -> None:
    out = _simulate(
        tmp_path / "a.jsonl", "--rounds", "1", "--seed", "3", "--start", "2030-05-06T07:08:09Z"
    )
    assert b'"at":"2030-05-06T07:0' in out
    assert b'"at":"2026-' not in out


def test_the_wall_clock_does_not_enter_the_events(monkeypatch: pytest.MonkeyPatch) -> None:
    def events() -> list[bytes]:
        sim = Simulation(Config(tables=3, players=9, rounds=3, seed=9))
        return [e.message.value for e in sim]

    first = events()

    class Frozen(datetime):
        @classmethod
        def now(cls, tz: object = None) -> datetime:  # type: ignore[override]
            return datetime(1999, 1, 1, tzinfo=UTC)

    monkeypatch.setattr("datetime.datetime", Frozen)
    assert events() == first


def test_rounds_zero_goes_on_for_ever_and_stays_in_time_order_per_table() -> None:
    sim = Simulation(Config(tables=3, players=12, rounds=0, seed=5))
    taken = list(itertools.islice(sim, 5000))
    assert len(taken) == 5000
    offsets = [e.offset for e in taken if not e.retry]
    assert all(b >= a - 0.002 for a, b in itertools.pairwise(offsets))
    assert sim.counts["rounds"] > 30
