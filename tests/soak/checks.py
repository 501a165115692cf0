"""The soak's checks, every few minutes and at the end, with the simulator paused meanwhile:

- `croupier verify` on the retained window: 0 missing, 0 duplicated, 0 differing (and 0
  unexpected);
- the read side equal to a replay of the same window: the committed accepted, table-stats and
  rejected topics as retention left them, projected into a fresh SQLite database, answer the
  recall of every round opened in that window (its timeline, outcome, every bet and decision)
  and every table's board exactly as the live read side (PostgreSQL, two projectors) does;
- the wallet example's balances equal to the sum of the committed records below its positions.
"""

from __future__ import annotations

import signal
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from schemas.events import RoundOpened
from schemas.journal import Journal
from services.audit.reader import Message, read_topic
from services.audit.verify import audit
from services.history.migrate import upgrade
from services.history.projection import Changes, Source
from services.history.queries import Reads
from services.history.store import Store, connect
from tests.chaos.cluster import wait_caught_up
from tests.e2e.support import wait_read_up
from tests.soak.stack import OUT, Stack, say
from tests.soak.watch import Tape

BATCH = 500


@dataclass(frozen=True, kw_only=True)
class Checked:
    at: float
    events_in: int
    checked: int
    missing: int
    duplicated: int
    differing: int
    unexpected: int
    not_checkable: int
    rounds_compared: int
    read_side_differs: int
    players_compared: int
    wallet_differs: int
    seconds: float

    @property
    def ok(self) -> bool:
        return not (
            self.missing
            or self.duplicated
            or self.differing
            or self.unexpected
            or self.read_side_differs
            or self.wallet_differs
        )

    def line(self) -> str:
        return (
            f"{self.at:7.0f} s verify: events {self.events_in} checked {self.checked} missing "
            f"{self.missing} duplicated {self.duplicated} differing {self.differing} unexpected "
            f"{self.unexpected} (not checkable {self.not_checkable}); read side vs replay: "
            f"{self.rounds_compared} rounds, {self.read_side_differs} differ; wallet: "
            f"{self.players_compared} balances, {self.wallet_differs} differ "
            f"({self.seconds:.0f} s)"
        )


def check(stack: Stack, tape: Tape, started: float, number: int) -> Checked:
    """Pause the simulator, let everything catch up, check, and let the simulator go on."""
    settings = stack.ready()
    simulator = stack.simulator
    assert simulator is not None
    began = time.monotonic()
    simulator.signal(signal.SIGSTOP)
    try:
        wait_caught_up(settings, timeout=600, stall=180)
        wait_read_up(stack.api_url, timeout=300)
        result = audit(settings, timeout=600)
        report = result.report
        compared, differs = read_side(stack, number)
        players, wallet_differs = wallet(stack.wallet_db, tape)
    finally:
        simulator.signal(signal.SIGCONT)
    checked = Checked(
        at=began - started,
        events_in=result.events_in,
        checked=report.checked,
        missing=report.count("missing"),
        duplicated=report.count("duplicated"),
        differing=report.count("differing"),
        unexpected=report.count("unexpected"),
        not_checkable=report.not_checkable,
        rounds_compared=compared,
        read_side_differs=differs,
        players_compared=players,
        wallet_differs=wallet_differs,
        seconds=time.monotonic() - began,
    )
    say(checked.line())
    return checked


def read_side(stack: Stack, number: int) -> tuple[int, int]:
    """Rounds opened in the retained window and tables compared, and how many differ."""
    settings = stack.ready()
    path = OUT / f"replay-{number}.sqlite"
    for old in OUT.glob(f"replay-{number}.sqlite*"):
        old.unlink()
    replay = connect(f"sqlite:///{path}")
    live = connect(stack.postgres.url)
    try:
        upgrade(replay)
        store = Store(replay)
        topics: list[tuple[Source, str]] = [
            ("accepted", settings.topic_accepted),
            ("table-stats", settings.topic_table_stats),
            ("rejected", settings.topic_rejected),
        ]
        opened: list[tuple[str, str]] = []
        for source, topic in topics:
            messages = list(read_topic(settings, topic, timeout=600))
            _project(store, source, messages)
            if source == "accepted":
                opened += _opened(messages)
        mine, theirs = Reads(replay), Reads(live)
        differs = 0
        for table_id, round_id in opened:
            if _plain(mine.recall(table_id, round_id)) != _plain(theirs.recall(table_id, round_id)):
                differs += 1
                if differs <= 3:
                    say(f"read side differs from the replay: round {table_id} {round_id}")
        tables = {t for t, _ in opened}
        for table_id in sorted(tables):
            if mine.stats(table_id) != theirs.stats(table_id):
                differs += 1
                say(f"read side differs from the replay: board of {table_id}")
        return len(opened) + len(tables), differs
    finally:
        replay.dispose()
        live.dispose()


def _project(store: Store, source: Source, messages: list[Message]) -> None:
    """The messages into the store in batches, each with its positions, from the window's start."""
    partitions = sorted({m.partition for m in messages})
    firsts = {p: min(m.offset for m in messages if m.partition == p) for p in partitions}
    store.begin_at({(source, p): firsts[p] for p in partitions})
    offsets = dict(firsts)
    for start in range(0, len(messages), BATCH):
        changes, moves = Changes(), dict[tuple[str, int], tuple[int, int]]()
        for m in messages[start : start + BATCH]:
            changes.feed(source, m.value, m.timestamp)
            moves[(source, m.partition)] = (
                moves.get((source, m.partition), (offsets[m.partition], 0))[0],
                m.offset + 1,
            )
            offsets[m.partition] = m.offset + 1
        store.write(changes, moves)


_JOURNAL = msgspec.json.Decoder(Journal)


def _opened(messages: list[Message]) -> list[tuple[str, str]]:
    found = []
    for m in messages:
        for event in _JOURNAL.decode(m.value).inputs:
            if isinstance(event, RoundOpened):
                found.append((event.table_id, event.round_id))
    return found


def _plain(answer: Any) -> Any:
    return None if answer is None else msgspec.to_builtins(answer)


def wallet(db: Path, tape: Tape) -> tuple[int, int]:
    """The ledger's balances against the committed credits below its positions: how many
    balances were compared, and how many differ."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as ledger:
        ledger.execute("BEGIN")
        positions = {
            (str(t), int(p)): int(o)
            for t, p, o in ledger.execute("SELECT topic, partition, next_offset FROM positions")
        }
        balances = {
            (str(player), str(currency)): int(balance)
            for player, currency, balance in ledger.execute(
                "SELECT player_id, currency, balance FROM balances"
            )
        }
        ledger.execute("COMMIT")
    expected = tape.wallet_at(positions).balances
    accounts = set(balances) | set(expected)
    differs = [a for a in accounts if balances.get(a, 0) != expected.get(a, 0)]
    for account in differs[:3]:
        say(f"wallet differs: {account} ledger {balances.get(account)} sum {expected.get(account)}")
    return len(accounts), len(differs)
