"""The SQLite wallet credits each record id once, a batch at a time, and keeps it on disk."""

from __future__ import annotations

import io
import sqlite3
from collections import Counter
from dataclasses import replace
from pathlib import Path

import msgspec
import pytest

from schemas.codec import encode
from schemas.records import Refund, Settlement
from services.settlement.fold import Fold
from services.simulation.simulator import Config, Simulation
from services.wallet.command import render
from services.wallet.credit import Credit, credit_of
from services.wallet.ledger import Ledger
from tests.unit.builders import bet, round_event, rounds, run


def records() -> list[bytes]:
    """Settlements and refunds of a small simulated floor, as croupier writes them."""
    fold = Fold()
    sim = Simulation(Config(tables=3, players=12, rounds=12, seed=77))
    return [
        encode(r)
        for e in sim
        for r in fold.feed(e.message.topic, e.message.value)
        if isinstance(r, Settlement | Refund)
    ]


def expected(raws: list[bytes]) -> dict[tuple[str, str], int]:
    """What each player's balance must be: payouts and refunds, each record once."""
    balances: Counter[tuple[str, str]] = Counter()
    for raw in {*raws}:
        record = msgspec.json.decode(raw)
        amount = record["payout"] if record["type"] == "settlement" else record["amount"]
        balances[(record["player_id"], record["currency"])] += amount
    return dict(balances)


def balances(ledger: Ledger) -> dict[tuple[str, str], int]:
    return {(b.player_id, b.currency): b.balance for b in ledger.balances()}


def test_the_same_record_twice_credits_once(tmp_path: Path) -> None:
    raws = records()
    win = next(r for r in raws if b'"result":"win"' in r)
    ledger = Ledger(str(tmp_path / "w.sqlite"))
    first = ledger.apply([credit_of(win), credit_of(win)])
    again = ledger.apply([credit_of(win)])
    assert (first.new, first.repeated, again.new, again.repeated) == (1, 1, 0, 1)
    record = msgspec.json.decode(win)
    [balance] = ledger.balances()
    assert balance.balance == record["payout"] > record["stake"] == balance.staked
    assert balance.net == record["payout"] - record["stake"]
    assert (balance.settlements, balance.refunds) == (1, 0)


def test_a_refund_credits_the_stake_back_and_nets_to_zero(tmp_path: Path) -> None:
    refund = next(r for r in records() if b'"type":"refund"' in r)
    ledger = Ledger(str(tmp_path / "w.sqlite"))
    ledger.apply([credit_of(refund)])
    [balance] = ledger.balances()
    assert balance.balance == msgspec.json.decode(refund)["amount"]
    assert (balance.net, balance.refunds) == (0, 1)


def test_every_record_applied_twice_in_any_batches_gives_the_balances_of_once(
    tmp_path: Path,
) -> None:
    raws = records()
    ledger = Ledger(str(tmp_path / "w.sqlite"))
    for start in range(0, len(raws), 97):
        ledger.apply([credit_of(r) for r in raws[start : start + 97]])
    once = balances(ledger)
    replayed = ledger.apply([credit_of(r) for r in reversed(raws)])
    assert replayed.new == 0 and replayed.repeated == len(raws)
    assert balances(ledger) == once == expected(raws)
    assert ledger.count() == len(set(raws))


def test_a_batch_that_fails_half_way_credits_nothing(tmp_path: Path) -> None:
    raws = records()
    good = [credit_of(r) for r in raws[:10]]
    broken = replace(good[0], record_id="x", amount=None)  # type: ignore[arg-type]
    ledger = Ledger(str(tmp_path / "w.sqlite"))
    with pytest.raises(sqlite3.IntegrityError):
        ledger.apply([*good[:5], broken, *good[5:]], {("settlements", 0): 10})
    assert ledger.balances() == []
    assert ledger.count() == 0
    assert ledger.positions(["settlements"]) == {}


def test_balances_and_positions_survive_reopening_the_file(tmp_path: Path) -> None:
    raws = records()
    path = str(tmp_path / "deep" / "w.sqlite")
    ledger = Ledger(path)
    ledger.apply([credit_of(r) for r in raws], {("s", 0): 5, ("s", 1): 7, ("other", 0): 1})
    before = balances(ledger)
    ledger.close()
    reopened = Ledger(path)
    assert balances(reopened) == before
    assert reopened.positions(["s"]) == {("s", 0): 5, ("s", 1): 7}


def test_anything_but_a_settlement_or_refund_is_not_a_credit() -> None:
    with pytest.raises(msgspec.DecodeError):
        credit_of(b'{"type":"rejected","v":1,"reason":"malformed","detail":"","topic":"","raw":""}')
    assert isinstance(credit_of(records()[0]), Credit)


def _corrected_win() -> list[bytes]:
    """A Sic Bo big bet of 100 won (200), then the result corrected to small: a debit of 200."""
    fold = Fold()
    events = rounds(
        round_event("opened", game="sicbo"),
        round_event("betting_closed", last_seq=1),
        round_event("result", dice=[4, 5, 6]),
        round_event("corrected", dice=[1, 2, 3], reason="misread", authorized_by="ana"),
    )
    return [encode(r) for r in run([*events[:3], ("bets", bet(1, "big")), events[3]], fold)]


def test_an_adjustment_is_applied_once_and_its_debit_may_go_below_zero(tmp_path: Path) -> None:
    settlement, adjustment = _corrected_win()
    ledger = Ledger(str(tmp_path / "w.sqlite"))
    ledger.apply([credit_of(adjustment)])  # read before its settlement: balance below zero
    [balance] = ledger.balances()
    assert (balance.balance, balance.adjustments) == (-200, 1)
    again = ledger.apply([credit_of(adjustment), credit_of(settlement)])
    assert (again.new, again.repeated) == (1, 1)
    [balance] = ledger.balances()
    assert (balance.balance, balance.settlements, balance.adjustments) == (0, 1, 1)


def test_the_report_lists_balances_below_zero(tmp_path: Path) -> None:
    _, adjustment = _corrected_win()
    ledger = Ledger(str(tmp_path / "w.sqlite"))
    ledger.apply([credit_of(adjustment)])
    out = io.StringIO()
    render(ledger.balances(), out)
    assert "below zero: alice EUR -200" in out.getvalue()


def test_a_ledger_written_before_adjustments_gains_their_column(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE balances (player_id TEXT NOT NULL, currency TEXT NOT NULL, "
        "balance INTEGER NOT NULL DEFAULT 0, staked INTEGER NOT NULL DEFAULT 0, "
        "settlements INTEGER NOT NULL DEFAULT 0, refunds INTEGER NOT NULL DEFAULT 0, "
        "PRIMARY KEY (player_id, currency)) WITHOUT ROWID;"
        "INSERT INTO balances VALUES ('bob', 'EUR', 500, 100, 1, 0);"
    )
    db.commit()
    db.close()
    ledger = Ledger(str(path))
    [balance] = ledger.balances()
    assert (balance.player_id, balance.balance, balance.adjustments) == ("bob", 500, 0)
