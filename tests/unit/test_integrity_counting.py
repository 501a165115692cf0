"""Which rounds the integrity tests count, as the fold decided them; `croupier integrity` on a
file; and the same figures from the journals the workers commit to `accepted`."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from schemas.codec import encode
from schemas.events import AnyEvent
from schemas.journal import Journal, records
from services.settlement.fold import DEFAULT_HORIZON, Fold
from services.simulation.simulator import Config, Simulation
from services.statistics.command import counted, findings
from services.statistics.counted import Counted
from services.statistics.integrity import CountedRound, evaluate
from tests.unit.builders import round_event

ROOT = Path(__file__).resolve().parents[2]
RESULT_AT = "2026-11-29T12:01:00Z"
MICROS = int(datetime(2026, 11, 29, 12, 1, tzinfo=UTC).timestamp()) * 1_000_000
"""RESULT_AT in microseconds since 1970."""


def whole(round_id: str, outcome: list[int], **opened: str) -> list[bytes]:
    return [
        round_event("opened", round_id, game="sicbo", **opened),
        round_event("betting_closed", round_id, last_seq=0),
        round_event("result", round_id, dice=outcome, at=RESULT_AT),
    ]


def counted_of(lines: list[bytes]) -> dict[str, CountedRound]:
    found = counted(lines, horizon=DEFAULT_HORIZON)
    return {rnd.round_id: rnd for rnd in found.rounds()}


def test_a_round_with_a_result_counts_with_its_dealer_shaker_and_result_instant() -> None:
    found = counted_of(whole("R1", [1, 2, 3], dealer_id="D1", shaker_id="S1"))
    assert found == {
        "R1": CountedRound(
            table_id="T1",
            round_id="R1",
            game="sicbo",
            at=MICROS,
            outcome=(1, 2, 3),
            dealer_id="D1",
            shaker_id="S1",
        )
    }


def test_a_corrected_round_counts_with_its_last_correction() -> None:
    lines = [
        *whole("R2", [6, 6, 6]),
        round_event("corrected", "R2", dice=[1, 1, 2], reason="misread", authorized_by="sup"),
        round_event(
            "corrected", "R2", dice=[4, 5, 6], reason="misread", authorized_by="sup", event_id="c2"
        ),
    ]
    assert counted_of(lines)["R2"].outcome == (4, 5, 6)
    assert counted_of(lines)["R2"].at == MICROS


def test_cancelled_and_voided_rounds_do_not_count() -> None:
    lines = [
        round_event("opened", "R3", game="sicbo"),
        round_event("cancelled", "R3"),
        *whole("R4", [2, 2, 2]),
        round_event("voided", "R4", reason="fault on video", authorized_by="sup"),
        *whole("R5", [3, 4, 5]),
        round_event("corrected", "R5", dice=[3, 4, 6], reason="misread", authorized_by="sup"),
        round_event("voided", "R5", reason="fault on video", authorized_by="sup"),
    ]
    assert counted_of(lines) == {}


def test_events_the_life_cycle_forbids_change_nothing() -> None:
    lines = [
        round_event("opened", "R6", game="sicbo", dealer_id="D1"),
        round_event("result", "R6", dice=[1, 1, 1], event_id="early"),  # betting not closed
        round_event("betting_closed", "R6", last_seq=0),
        round_event("result", "R6", dice=[5, 5, 5], at=RESULT_AT),
        round_event("result", "R6", dice=[6, 6, 6], event_id="second"),  # a second result
        round_event("corrected", "R6", dice=[5, 5, 5], reason="same", authorized_by="sup"),
        round_event(
            "corrected", "R6", discs=["red"] * 4, reason="x", authorized_by="s", event_id="c9"
        ),
        round_event("cancelled", "R6"),  # after the result
        round_event("opened", "R6", game="xocdia", dealer_id="D2", event_id="again"),
        round_event("corrected", "R9", dice=[1, 2, 3], reason="x", authorized_by="s"),  # unopened
    ]
    found = counted_of(lines)
    assert list(found) == ["R6"]
    assert (found["R6"].outcome, found["R6"].game, found["R6"].dealer_id) == (
        (5, 5, 5),
        "sicbo",
        "D1",
    )


def test_redelivered_events_are_ignored_even_with_other_content() -> None:
    opened = round_event("opened", "R7", game="sicbo", dealer_id="D1")
    lines = [
        opened,
        opened,
        round_event("opened", "R7", game="sicbo", dealer_id="D2"),  # same event_id
        round_event("betting_closed", "R7", last_seq=0),
        round_event("result", "R7", dice=[2, 3, 4], at=RESULT_AT),
        round_event("result", "R7", dice=[6, 6, 6], at="2026-11-29T13:00:00Z"),  # same event_id
    ]
    found = counted_of(lines)["R7"]
    assert (found.dealer_id, found.outcome, found.at) == ("D1", (2, 3, 4), MICROS)


def test_a_round_opened_with_an_invalid_dealer_is_rejected_and_never_counts() -> None:
    lines = [
        round_event("opened", "R8", game="sicbo", dealer_id="D\t1"),
        round_event("betting_closed", "R8", last_seq=0),
        round_event("result", "R8", dice=[2, 3, 4]),
    ]
    assert counted_of(lines) == {}
    records_out = Fold().feed(None, lines[0])
    assert [json.loads(msgspec.json.encode(r))["reason"] for r in records_out] == ["invalid_field"]


def _floor(tmp_path: Path) -> tuple[Path, list[bytes]]:
    config = Config(tables=3, players=4, rounds=120, seed=11)
    lines = [emission.message.value for emission in Simulation(config)]
    path = tmp_path / "floor.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path, lines


def test_the_command_writes_one_json_line_per_scope_and_test_sorted(tmp_path: Path) -> None:
    path, _ = _floor(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "integrity", str(path), "--json", "--window", "100"],
        capture_output=True,
        cwd=ROOT,
        check=True,
    )
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    fields = ["scope", "id", "game", "test", "rounds", "statistic", "df", "p_value", "verdict"]
    assert all(list(row) == fields for row in rows)
    keys = [(r["scope"], r["id"], r["test"], r["game"]) for r in rows]
    assert keys == sorted(keys)
    tables = {(r["id"], r["test"]): r for r in rows if r["scope"] == "table"}
    assert set(tables) == {
        ("SB-01", "faces"),
        ("SB-01", "totals"),
        ("HL-01", "faces"),
        ("HL-01", "totals"),
        ("XD-01", "reds"),
    }
    assert all(r["rounds"] == 100 and r["verdict"] != "too_few" for r in tables.values())
    assert tables[("XD-01", "reds")]["df"] == 4
    assert all(isinstance(r["statistic"], float) and isinstance(r["p_value"], float) for r in rows)
    assert {r["scope"] for r in rows} == {"table", "dealer", "shaker"}
    assert {r["verdict"] for r in rows if r["scope"] == "dealer"} == {"too_few"}
    assert rows == [
        json.loads(msgspec.json.encode(f))
        for f in findings(path.read_bytes().splitlines(), window=100, horizon=DEFAULT_HORIZON)
    ]


def test_a_simulated_dealer_with_a_loaded_die_raises_the_alarm_and_no_one_else_does() -> None:
    config = Config(tables=4, players=0, rounds=1200, seed=5, loaded=frozenset({("dealer", "D03")}))
    lines = [emission.message.value for emission in Simulation(config)]
    found = findings(lines, horizon=DEFAULT_HORIZON)
    alarms = {(f.scope, f.id, f.game, f.test) for f in found if f.verdict == "alarm"}
    assert {
        ("dealer", "D03", game, test) for game, test in [("sicbo", "faces"), ("xocdia", "reds")]
    } <= alarms
    assert {scope for scope, name, _, _ in alarms if name != "D03"} <= {"table", "shaker"}
    assert all(f.verdict in ("ok", "watch") for f in found if f.scope == "dealer" and f.id != "D03")


def test_the_command_refuses_a_window_under_100_and_thresholds_out_of_order(
    tmp_path: Path,
) -> None:
    path, _ = _floor(tmp_path)
    for args in (["--window", "99"], ["--alarm", "0.01", "--watch", "0.001"]):
        done = subprocess.run(
            [sys.executable, "-m", "services.cli", "integrity", str(path), *args],
            capture_output=True,
            cwd=ROOT,
            check=False,
        )
        assert done.returncode == 2
        assert done.stderr.startswith(b"croupier integrity: ")


def test_the_journals_committed_to_accepted_give_the_same_figures_as_the_replay(
    tmp_path: Path,
) -> None:
    """A worker commits, batch by batch, what its fold accepted, verbatim, to `accepted`; the
    journals read back, table by table in any interleaving, count the same rounds."""
    _, lines = _floor(tmp_path)
    fold = Fold(journal=True)
    journal = fold.journal
    assert journal is not None
    committed: list[bytes] = []
    for start in range(0, len(lines), 37):
        for raw in lines[start : start + 37]:
            fold.feed(None, raw)
        committed += records([raw for _, raw in journal.accepted], [], limit=4096)
        journal.clear()
    read = msgspec.json.Decoder(Journal)
    inputs: list[AnyEvent] = [event for record in committed for event in read.decode(record).inputs]
    by_table = sorted(inputs, key=lambda event: event.table_id)  # another interleaving of tables
    live = Counted()
    for event in by_table:
        live.accept(event)
    assert evaluate(live.rounds(), 100) == findings(lines, window=100, horizon=DEFAULT_HORIZON)


def test_the_dealer_and_shaker_change_no_record(tmp_path: Path) -> None:
    _, lines = _floor(tmp_path)
    bare = [
        msgspec.json.encode(
            {
                k: v
                for k, v in msgspec.json.decode(raw).items()
                if k not in ("dealer_id", "shaker_id")
            }
        )
        for raw in lines
    ]
    assert sum(b"dealer_id" in raw for raw in lines) >= 3 * 120  # a retry sends one again
    with_ids, without = Fold(), Fold()
    assert [encode(r) for raw in lines for r in with_ids.feed(None, raw)] == [
        encode(r) for raw in bare for r in without.feed(None, raw)
    ]
    assert all(with_ids.stats(t) == without.stats(t) for t in with_ids.tables)
