"""The database, fed croupier's committed output in any order and any batches, says what the
offline fold says; a batch is applied once; what cannot be decoded is counted and skipped."""

from __future__ import annotations

import json
import random
from contextlib import AbstractContextManager
from pathlib import Path
from tempfile import mkdtemp
from typing import Any, TypeVar

import msgspec
import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, inspect, text

from schemas.codec import encode
from schemas.events import AnyEvent, BetPlaced
from schemas.journal import Journal
from schemas.journal import records as journal_records
from schemas.records import Refund, Settlement
from services.history.migrate import HEAD, config, current, upgrade
from services.history.projection import Changes
from services.history.queries import Reads
from services.history.rows import decision_row, placed_row
from services.history.schema import DECIDED, PLACED, Id, metadata
from services.history.store import Conflict, Store
from services.simulation.streams import Profile, generate
from tests.committed import commit, shuffled
from tests.database import migrated, project, project_all
from tests.e2e.support import Offline, offline

T = TypeVar("T")
STREAMS = generate(
    7, tables=3, rounds=55, profile=Profile(bets_per_round=(0, 6), correct=0.2, void=0.1)
)
COMMITTED = commit(STREAMS)
OFFLINE = offline(STREAMS)


def answers(reads: Reads, off: Offline) -> dict[str, Any]:
    """What the database answers for every player, round and table the replay knows."""
    shown: dict[str, Any] = {}
    for player_id in sorted(off.players):
        page = reads.history(player_id, limit=500)
        assert page is not None
        shown[f"player {player_id}"] = page
    for table_id, round_id in sorted(off.outcomes):
        shown[f"round {table_id} {round_id}"] = reads.recall(table_id, round_id)
    for table_id in sorted(off.stats):
        shown[f"stats {table_id}"] = reads.stats(table_id)
    shown["tables"] = reads.tables()
    counters = reads.counters()
    shown["counters"] = {k: v for k, v in counters.items() if v and "latency" not in k[0]}
    shown["pending"] = reads.pending()
    return shown


def expected_decisions(reads: Reads, off: Offline) -> None:
    """Every bet's decision is the replay's, every round's outcome and timeline too."""
    for player_id in sorted(off.players):
        page = reads.history(player_id, limit=500)
        assert page is not None
        for b in page.bets:
            record = off.decisions[b.bet_id]
            if b.status == "settled":
                assert (b.decision_id, b.result, b.payout) == (
                    record["settlement_id"],
                    record["result"],
                    record["payout"],
                )
                adjusted = off.adjustments.get(b.bet_id, [])
                assert [(a.adjustment_id, a.delta, a.authorized_by) for a in b.adjustments] == [
                    (a["adjustment_id"], a["delta"], a["authorized_by"]) for a in adjusted
                ]
                net = adjusted[-1]["payout"] if adjusted else record["payout"]
                assert b.net_payout == net
            else:
                assert (b.status, b.decision_id, b.refund_reason) == (
                    "refunded",
                    record["refund_id"],
                    record["reason"],
                )
        assert {b.bet_id for b in page.bets} == {
            bet_id for bet_id, r in off.decisions.items() if r["player_id"] == player_id
        }
    for (table_id, round_id), (phase, dice, discs) in off.outcomes.items():
        recall = reads.recall(table_id, round_id)
        assert recall is not None
        assert (recall.status, recall.dice, recall.discs) == (phase, dice, discs)
        steps = [(s.type, s.event_id) for s in recall.timeline]
        assert steps == off.timelines.get((table_id, round_id), [])
    for table_id, stats in off.stats.items():
        found = reads.stats(table_id)
        assert found is not None
        assert json.loads(found) == stats


def test_the_database_answers_what_the_offline_replay_decided(engine: Engine) -> None:
    project_all(Store(engine), COMMITTED, seed=3)
    reads = Reads(engine)
    expected_decisions(reads, OFFLINE)
    assert OFFLINE.adjustments, "the streams should hold corrections that adjust bets"
    corrected = [
        s
        for key in OFFLINE.outcomes
        if (recall := reads.recall(*key)) is not None
        for s in recall.timeline
        if s.type in ("round.corrected", "round.voided")
    ]
    assert corrected and all(s.authorized_by and s.reason for s in corrected)
    assert all(s.previous_dice or s.previous_discs for s in corrected)
    assert reads.pending() == 0
    health = reads.counters()
    assert health[("croupier_read_players", "")] == len(OFFLINE.players)
    assert health[("croupier_read_events_total", '{topic="accepted"}')] == COMMITTED.count(
        "accepted"
    )


@settings(max_examples=3, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), largest=st.sampled_from([1, 17, 400, 5000]))
def test_any_merge_of_the_topics_in_any_batches_gives_the_same_answers(
    engine: Engine, seed: int, largest: int
) -> None:
    reference = _reference(engine)
    with _fresh(engine) as other:
        rng = random.Random(seed)
        project(Store(other), shuffled(COMMITTED, rng), rng, largest=largest)
        assert answers(Reads(other), OFFLINE) == reference


_REFERENCE: dict[str, dict[str, Any]] = {}


def _reference(engine: Engine) -> dict[str, Any]:
    name = engine.dialect.name
    if name not in _REFERENCE:
        with _fresh(engine) as first:
            project_all(Store(first), COMMITTED, seed=0)
            _REFERENCE[name] = answers(Reads(first), OFFLINE)
    return _REFERENCE[name]


def _fresh(engine: Engine) -> AbstractContextManager[Engine]:
    return migrated(engine.dialect.name, Path(mkdtemp()))


def test_a_batch_from_positions_another_projector_moved_is_refused_whole(engine: Engine) -> None:
    store = Store(engine)
    store.begin_at({("accepted", 0): 0})
    [(raw, ts), *_] = COMMITTED.topics["accepted"]
    first = Changes()
    first.feed("accepted", raw, ts)
    store.write(first, {("accepted", 0): (0, 1)})
    again = Changes()
    again.feed("accepted", raw, ts)
    with pytest.raises(Conflict):
        store.write(again, {("accepted", 0): (0, 1)})
    reads = Reads(engine)
    assert store.positions() == {("accepted", 0): 1}
    assert reads.counters()[("croupier_read_events_total", '{topic="accepted"}')] == 1


def test_a_message_that_does_not_decode_is_counted_and_skipped(engine: Engine) -> None:
    store = Store(engine)
    store.begin_at({("rejected", 0): 0, ("accepted", 0): 0})
    changes = Changes()
    changes.feed("rejected", b"{not json", 1)
    changes.feed("accepted", b'{"type": "round.exploded"}', 1)
    changes.feed("accepted", b'{"type":"journal","v":1,"inputs":[{"type":"bet.pla', 1)
    [settlement, *_] = _decisions(Settlement)
    changes.feed("accepted", journal_records([], [encode(settlement)])[0], 2)
    assert len(changes.unreadable) == 3
    assert "a journal that does not decode" in changes.unreadable[2]
    store.write(changes, {("rejected", 0): (0, 1), ("accepted", 0): (0, 3)})
    counters = Reads(engine).counters()
    assert counters[("croupier_read_unreadable_total", '{topic="rejected"}')] == 1
    assert counters[("croupier_read_unreadable_total", '{topic="accepted"}')] == 2
    settled = sum(
        n
        for (name, labels), n in counters.items()
        if name == "croupier_read_decisions_total" and 'kind="settlement"' in labels
    )
    assert settled == 1


def test_a_journal_holding_a_nul_is_stored_without_what_holds_it(engine: Engine) -> None:
    """A worker from before NUL was refused may have committed such a bet: PostgreSQL cannot
    store it, so it is skipped (counted), and the rest of its journal and batch is written."""
    [settlement, *_] = _decisions(Settlement)
    bad = msgspec.structs.replace(settlement, bet_id=settlement.bet_id + "\x00")
    [journal] = journal_records([], [encode(settlement), encode(bad)])
    store = Store(engine)
    store.begin_at({("accepted", 0): 0})
    changes = Changes()
    changes.feed("accepted", journal, 1)
    store.write(changes, {("accepted", 0): (0, 1)})
    counters = Reads(engine).counters()
    assert counters[("croupier_read_unreadable_total", '{topic="accepted"}')] == 1
    page = Reads(engine).history(settlement.player_id, limit=10)
    assert page is not None and [b.bet_id for b in page.bets] == [settlement.bet_id]
    assert store.positions() == {("accepted", 0): 1}


@given(st.integers(1, 400), st.randoms(use_true_random=False))
@settings(max_examples=20)
def test_records_fed_in_runs_make_the_same_changes_as_fed_one_by_one(
    run: int, rng: random.Random
) -> None:
    """What the projector does (`feed_all` of each partition's records read) against `feed`."""
    messages = [(source, raw, ts) for source, sent in COMMITTED.topics.items() for raw, ts in sent]
    messages += [("rejected", b"{not json", 1), ("accepted", b'{"type": "round.x"}', 2)]
    messages += [("accepted", b"[]", 3), ("table-stats", b"{", 4), ("rejected", b"1", 5)]
    rng.shuffle(messages)
    one = Changes()
    for source, raw, ts in messages:
        one.feed(source, raw, ts)
    runs = Changes()
    start = 0
    while start < len(messages):
        source = messages[start][0]
        end = start
        while end < len(messages) and end - start < run and messages[end][0] == source:
            end += 1
        runs.feed_all(source, [Record(raw, ts) for _, raw, ts in messages[start:end]])
        start = end
    assert runs == one
    assert len(runs.unreadable) == 5


@given(st.randoms(use_true_random=False), st.floats(0, 1))
@settings(max_examples=20)
def test_a_bet_is_made_whole_once_when_both_its_halves_are_in_the_batch(
    rng: random.Random, share: float
) -> None:
    """`Pairs.joined`, what the projector encodes while it reads: every bet whose placement and
    decision are both in the batch, once, whichever came first and however often redelivered."""
    messages = [(source, raw, ts) for source, sent in COMMITTED.topics.items() for raw, ts in sent]
    batch = [m for m in messages if rng.random() < share]
    batch += rng.sample(batch, len(batch) // 3)  # redeliveries
    rng.shuffle(batch)
    changes = Changes()
    for source, raw, ts in batch:
        changes.feed(source, raw, ts)
    placements, decisions = _first_halves(batch)
    both = placements.keys() & decisions.keys()
    joined = changes.pairs.joined
    assert sorted((row.table_id, row.round_id, row.bet_id) for row in joined) == sorted(both)
    for row in joined:
        key = (row.table_id, row.round_id, row.bet_id)
        placed, decision = placed_row(placements[key]), decision_row(*decisions[key])
        assert {c: getattr(row, c) for c in DECIDED} == {c: getattr(decision, c) for c in DECIDED}
        assert {c: getattr(row, c) for c in PLACED} == {c: getattr(placed, c) for c in PLACED}
        assert row.player_id == decision.player_id


def _first_halves(
    batch: list[tuple[str, bytes, int]],
) -> tuple[
    dict[tuple[str, str, str], BetPlaced],
    dict[tuple[str, str, str], tuple[Settlement | Refund, int]],
]:
    """The batch's first bet.placed and first decision (with its Kafka timestamp) of each bet,
    read from the journals themselves."""
    placements: dict[tuple[str, str, str], BetPlaced] = {}
    decisions: dict[tuple[str, str, str], tuple[Settlement | Refund, int]] = {}
    for source, raw, ts in batch:
        if source != "accepted":
            continue
        read = msgspec.json.decode(raw, type=Journal | AnyEvent)
        inputs, made = (read.inputs, read.decisions) if isinstance(read, Journal) else ((read,), ())
        for event in inputs:
            if isinstance(event, BetPlaced):
                placements.setdefault((event.table_id, event.round_id, event.bet_id), event)
        for decision in made:
            if isinstance(decision, Settlement | Refund):
                key = (decision.table_id, decision.round_id, decision.bet_id)
                decisions.setdefault(key, (decision, ts))
    return placements, decisions


class Record(msgspec.Struct):
    value: bytes
    timestamp: int


def test_the_migrations_create_exactly_the_tables_the_code_uses(engine: Engine) -> None:
    with engine.connect() as db:
        assert compare_metadata(MigrationContext.configure(db), metadata) == []


def test_ids_compare_as_bytes_on_postgresql_whatever_the_server_locale(tmp_path: Path) -> None:
    """Alembic does not compare collations: the migrated id columns are checked here (SQLite
    compares text as bytes already)."""
    wanted = {
        (table.name, column.name)
        for table in metadata.tables.values()
        for column in table.columns
        if column.type is Id
    }
    with migrated("postgresql", tmp_path) as engine, engine.connect() as db:
        found = set(
            db.execute(
                text(
                    "SELECT table_name, column_name FROM information_schema.columns "
                    "WHERE table_schema = current_schema() AND collation_name = 'C'"
                )
            ).tuples()
        )
    assert len(wanted) == 26  # the ids, and the report's quarter hours (migration 0010)
    assert found == wanted


def test_a_bets_key_is_its_round_and_id_as_migrated(engine: Engine) -> None:
    """Alembic does not compare primary keys: the migrated one of bets is checked here."""
    key = inspect(engine).get_pk_constraint("bets")["constrained_columns"]
    assert (
        key
        == [c.name for c in metadata.tables["bets"].primary_key]
        == [
            "table_id",
            "round_id",
            "bet_id",
        ]
    )


def test_the_migration_that_keys_bets_by_round_keeps_every_answer(engine: Engine) -> None:
    """Down to the key of bet ids alone (0007) and up again to the key led by the round: every
    bet is still there, and every answer (the recalls' order of bets included) is the same."""
    project(Store(engine), shuffled(COMMITTED, random.Random(4)), random.Random(4))
    projected = answers(Reads(engine), OFFLINE)
    assert projected == _reference(engine)
    with engine.begin() as connection:
        cfg = config()
        cfg.attributes["connection"] = connection
        command.downgrade(cfg, "0007")
    assert inspect(engine).get_pk_constraint("bets")["constrained_columns"] == ["bet_id"]
    assert answers(Reads(engine), OFFLINE) == projected

    upgrade(engine)

    assert current(engine) == HEAD
    assert inspect(engine).get_pk_constraint("bets")["constrained_columns"][0] == "table_id"
    assert answers(Reads(engine), OFFLINE) == projected


def test_the_newest_migration_is_the_one_a_restart_checks_for(engine: Engine) -> None:
    assert ScriptDirectory.from_config(config()).get_current_head() == HEAD == current(engine)


def test_a_kept_recall_is_answered_only_while_its_round_has_not_changed(engine: Engine) -> None:
    store, reads = Store(engine), Reads(engine)
    rng = random.Random(3)
    messages = list(shuffled(COMMITTED, rng))
    journals = [n for n, (source, _, _) in enumerate(messages) if source == "accepted"]
    half = journals[len(journals) // 2]  # half of the transactions before, half after
    project(store, messages[:half], rng)
    rounds = sorted(OFFLINE.outcomes)
    before = {key: reads.recall_json(*key) for key in rounds}
    assert reads.recall_json(*rounds[0]) is reads.recall_json(*rounds[0])  # kept, not re-read
    project(store, messages[half:], rng)
    changed = 0
    for key in rounds:
        now = reads.recall_json(*key)
        assert now == msgspec.json.encode(reads.recall(*key))
        changed += now != before[key]
    assert changed > len(rounds) // 4


def _journals() -> list[Journal]:
    return [msgspec.json.decode(raw, type=Journal) for raw, _ in COMMITTED.topics["accepted"]]


def _decisions(kind: type[T]) -> list[T]:
    """The committed decisions of a kind, in commit order."""
    return [d for j in _journals() for d in j.decisions if isinstance(d, kind)]


def _a_bet_and_its_decision() -> tuple[bytes, bytes]:
    """A journal of a committed bet.placed alone, and one of that bet's settlement alone."""
    settled = {s.bet_id: s for s in _decisions(Settlement)}
    for event in (e for j in _journals() for e in j.inputs):
        if isinstance(event, BetPlaced) and event.bet_id in settled:
            [placed] = journal_records([encode(event)], [])
            [decided] = journal_records([], [encode(settled[event.bet_id])])
            return placed, decided
    raise AssertionError("the committed streams hold no settled bet")


def _placement(journal: bytes) -> BetPlaced:
    [event] = msgspec.json.decode(journal, type=Journal).inputs
    assert isinstance(event, BetPlaced)
    return event


def test_a_bet_placed_and_decided_in_one_batch_is_one_row_with_both_halves(
    engine: Engine,
) -> None:
    placed, decided = _a_bet_and_its_decision()
    store, reads = Store(engine), Reads(engine)
    batch = Changes()
    batch.feed("accepted", placed, 1)
    batch.feed("accepted", decided, 2)
    store.write(batch, {})
    bet_placed = _placement(placed)
    page = reads.history(bet_placed.player_id, limit=10)
    assert page is not None
    [bet] = page.bets
    assert (bet.bet_id, bet.status, bet.seq) == (
        bet_placed.bet_id,
        "settled",
        bet_placed.seq,
    )
    assert page.total == 1
    assert reads.pending() == 0


def test_a_whole_bet_already_projected_half_is_merged_into_its_row_not_doubled(
    engine: Engine,
) -> None:
    placed, decided = _a_bet_and_its_decision()
    store, reads = Store(engine), Reads(engine)
    first = Changes()
    first.feed("accepted", placed, 1)
    store.write(first, {})
    assert reads.pending() == 1
    again = Changes()  # its placement again (say a bet id reused), now with its decision
    again.feed("accepted", placed, 1)
    again.feed("accepted", decided, 2)
    store.write(again, {})
    page = reads.history(_placement(placed).player_id, limit=10)
    assert page is not None
    assert [b.status for b in page.bets] == ["settled"]
    assert page.total == 1
    assert reads.pending() == 0
