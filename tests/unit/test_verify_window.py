"""The audit of a window: what retention removed is never a finding, what is wrong still is."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.codec import encode
from schemas.records import Adjustment, Refund, Rejected, Settlement
from services.audit.compare import Outputs
from services.audit.judge import judge
from services.audit.reader import Message
from services.audit.verify import _window
from services.audit.window import (
    BETS_BEFORE,
    LINKED,
    OPENED_BEFORE,
    OUTPUT_CUT,
    Kept,
    Span,
)
from services.partitioner import partition_of
from services.settlement.fold import Fold
from services.simulation.streams import Profile, Streams, generate, interleave
from tests.unit.builders import bet, sicbo_round

# -- worked examples: one table T1, one partition of each topic ------------------------------


def _kept(
    rounds: Sequence[bytes], bets: Sequence[bytes], cut_rounds: int, cut_bets: int
) -> list[Kept]:
    return [
        Kept(kind="rounds", partition=0, offset=n, value=raw)
        for n, raw in enumerate(rounds)
        if n >= cut_rounds
    ] + [
        Kept(kind="bets", partition=0, offset=n, value=raw)
        for n, raw in enumerate(bets)
        if n >= cut_bets
    ]


def _spans(
    rounds: int, bets: int, cut_rounds: int, cut_bets: int, out_cut: int = 0
) -> dict[str, list[Span]]:
    return {
        "rounds": [Span(topic="rounds", partition=0, start=cut_rounds, end=rounds)],
        "bets": [Span(topic="bets", partition=0, start=cut_bets, end=bets)],
        "settlements": [Span(topic="settlements", partition=0, start=out_cut, end=99)],
        "refunds": [Span(topic="refunds", partition=0, start=0, end=99)],
        "rejected": [Span(topic="rejected", partition=0, start=0, end=99)],
        "table-stats": [Span(topic="table-stats", partition=0, start=0, end=99)],
    }


def _committed(rounds: Sequence[bytes], bets: Sequence[bytes]) -> Outputs:
    """What a correct pipeline committed from the whole history."""
    fold = Fold()
    records = [r for raw in rounds for r in fold.feed("rounds", raw)]
    records += [r for raw in bets for r in fold.feed("bets", raw)]
    stats = fold.stats("T1")
    return Outputs(
        settlements=[encode(r) for r in records if isinstance(r, Settlement)],
        rejected=[encode(r) for r in records if isinstance(r, Rejected)],
        rejected_keys=[b"T1" for r in records if isinstance(r, Rejected)],
        table_stats={} if stats is None else {"T1": encode(stats)},
    )


def _three_rounds() -> tuple[list[bytes], list[bytes]]:
    """Rounds R1, R2, R3 of table T1, two bets each, in the order the table published them."""
    rounds = [raw for r in ("R1", "R2", "R3") for raw in sicbo_round([4, 5, 6], 2, round_id=r)]
    bets = [bet(s, stake=10 * s, round_id=r) for r in ("R1", "R2", "R3") for s in (1, 2)]
    return rounds, bets


def _ids(outputs: Outputs) -> list[str]:
    return [msgspec.json.decode(raw)["settlement_id"] for raw in outputs.settlements]


def test_a_round_wholly_before_the_window_is_not_checkable_and_its_loss_is_not_missing() -> None:
    rounds, bets = _three_rounds()
    committed = _committed(rounds, bets)
    # R1's three events and its two bets are gone; R1's settlements were committed long ago
    judged = judge(_kept(rounds, bets, 3, 2), _spans(9, 6, 3, 2), committed, horizon=200)
    assert judged.report.findings == []
    by_reason = {(u.topic, u.reason): u.count for u in judged.report.unchecked}
    assert by_reason[("settlements", OPENED_BEFORE)] == 2  # R1's
    # the bets window starts with R2's bets: a bet of R2, or of R3 published while R2's last
    # stragglers came, may have been removed; only rounds from R4 on would be checkable
    assert by_reason[("settlements", BETS_BEFORE)] == 4
    assert judged.report.not_checkable == 6 + 1  # and the board, which needs all 50 results


def test_a_round_cut_in_half_by_the_window_is_not_checkable_and_raises_no_rejection() -> None:
    rounds, bets = _three_rounds()
    committed = _committed(rounds, bets)
    # rounds lose R1's opening only: its betting_closed and result are kept, and the fold of the
    # window rejects them ("never opened"); the pipeline did not. Bets are whole.
    judged = judge(_kept(rounds, bets, 1, 0), _spans(9, 6, 1, 0), committed, horizon=200)
    assert judged.report.findings == []
    by_reason = {(u.topic, u.reason): u.count for u in judged.report.unchecked}
    assert by_reason == {
        ("settlements", OPENED_BEFORE): 2,
        ("rejected", OPENED_BEFORE): 2,
        ("table-stats", "its board needs results from before the input window"): 1,
    }
    assert judged.waiting == [] and judged.waiting_unchecked == 2  # R1's bets, never decided here


def test_a_loss_inside_the_window_is_still_missing() -> None:
    many = [raw for r in range(1, 5) for raw in sicbo_round([1, 2, 3], 2, round_id=f"R{r}")]
    bets = [bet(s, stake=10 * s, round_id=f"R{r}") for r in range(1, 5) for s in (1, 2)]
    committed = _committed(many, bets)
    ids = _ids(committed)
    assert ids[-1] == "settlement:T1-R4-2"
    lost = msgspec.structs.replace(committed, settlements=committed.settlements[:-1])
    # bets[0] starts with R2's bets (R1's removed): R2 and R3 are not checkable, R4 is
    judged = judge(_kept(many, bets, 3, 2), _spans(12, 8, 3, 2), lost, horizon=200)
    assert [(f.kind, f.key) for f in judged.report.findings] == [("missing", "settlement:T1-R4-2")]


def test_a_record_computed_from_the_window_but_gone_from_a_truncated_output_is_not_missing() -> (
    None
):
    rounds, bets = _three_rounds()
    committed = _committed(rounds, bets)
    lost = msgspec.structs.replace(committed, settlements=committed.settlements[1:])
    whole = judge(_kept(rounds, bets, 0, 0), _spans(9, 6, 0, 0), lost, horizon=200)
    assert [(f.kind, f.key) for f in whole.report.findings] == [("missing", "settlement:T1-R1-1")]
    truncated = judge(_kept(rounds, bets, 0, 0), _spans(9, 6, 0, 0, out_cut=1), lost, horizon=200)
    assert truncated.report.findings == []
    assert [(u.topic, u.reason, u.count) for u in truncated.report.unchecked] == [
        ("settlements", OUTPUT_CUT, 1)
    ]


def test_a_changed_payout_in_a_truncated_output_is_still_differing() -> None:
    rounds, bets = _three_rounds()
    committed = _committed(rounds, bets)
    first = msgspec.json.decode(committed.settlements[0])
    forged = msgspec.json.encode({**first, "payout": first["payout"] + 1})
    changed = msgspec.structs.replace(committed, settlements=[forged, *committed.settlements[1:]])
    judged = judge(_kept(rounds, bets, 0, 0), _spans(9, 6, 0, 0, out_cut=5), changed, horizon=200)
    assert [(f.kind, f.key) for f in judged.report.findings] == [
        ("differing", "settlement:T1-R1-1")
    ]


def test_a_repeat_whose_first_copy_was_removed_links_its_round() -> None:
    rounds = [
        raw for r in ("R1", "R2", "R3", "R4") for raw in sicbo_round([4, 5, 6], 1, round_id=r)
    ]
    first = bet(1, stake=10, round_id="R1", bet_id="B")
    again = bet(1, stake=99, round_id="R4", bet_id="B", event_id="again")  # a conflict
    bets = [first, bet(1, round_id="R2"), bet(1, round_id="R3"), again]
    committed = _committed(rounds, bets)
    assert [msgspec.json.decode(r)["reason"] for r in committed.rejected] == [
        "conflicting_duplicate"
    ]
    # bets[0] lost `first`: the window's fold settles `again` instead, as if it were the first
    judged = judge(_kept(rounds, bets, 0, 1), _spans(12, 4, 0, 1), committed, horizon=200)
    assert judged.report.findings == []  # not "differing" B, nor an "unexpected" rejection
    by_reason = {(u.topic, u.reason): u.count for u in judged.report.unchecked}
    assert by_reason == {("settlements", BETS_BEFORE): 3, ("rejected", LINKED): 1}


# -- the property: any cut of any partition, no finding ---------------------------------------


def _live(seed: int, tables: int, rounds: int) -> Streams:
    live = Streams()
    for n in range(rounds):
        step = generate(seed + n, tables=tables, rounds=1, profile=Profile(), first_round=n)
        live.rounds.extend(step.rounds)
        live.bets.extend(step.bets)
    return live


def _table(raw: bytes) -> bytes | None:
    try:
        value: Any = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return None
    table = value.get("table_id") if isinstance(value, dict) else None
    return table.encode() if isinstance(table, str) else None


def _part(key: bytes | None, n: int, rng: random.Random) -> int:
    return rng.randrange(n) if key is None else partition_of(key, n)


@settings(max_examples=60)
@given(
    seed=st.integers(0, 10_000),
    cuts=st.lists(st.floats(0, 1), min_size=4, max_size=4),
    out_cuts=st.lists(st.sampled_from([0.0, 0.0, 0.2, 0.6]), min_size=10, max_size=10),
)
def test_whatever_the_partitions_lost_a_correct_pipeline_has_no_finding(
    seed: int, cuts: list[float], out_cuts: list[float]
) -> None:
    rng = random.Random(seed)
    streams = _live(seed, tables=6, rounds=8)
    inputs: dict[tuple[str, int], list[tuple[bytes | None, bytes]]] = {
        (k, p): [] for k in ("rounds", "bets") for p in (0, 1)
    }
    for kind, raws in (("rounds", streams.rounds), ("bets", streams.bets)):
        for raw in raws:
            key = _table(raw)
            inputs[kind, _part(key, 2, rng)].append((key, raw))
    # the pipeline: task p folds its partitions in some allowed interleaving
    outs: dict[tuple[str, int], list[tuple[bytes | None, bytes]]] = {
        (role, q): []
        for role in ("settlements", "refunds", "adjustments", "rejected", "table-stats")
        for q in (0, 1)
    }
    for p in (0, 1):
        fold = Fold()
        mixed = interleave(
            Streams(
                rounds=[raw for _, raw in inputs["rounds", p]],
                bets=[raw for _, raw in inputs["bets", p]],
            ),
            rng,
        )
        for kind, raw in mixed:
            for record in fold.feed(kind, raw):
                match record:
                    case Settlement():
                        role, key = "settlements", record.player_id.encode()
                    case Rejected():
                        role, key = "rejected", _table(raw)
                    case Refund():
                        role, key = "refunds", record.player_id.encode()
                    case Adjustment():
                        role, key = "adjustments", record.player_id.encode()
                    case _:
                        continue  # boards are written per batch, below
                q = p % 2 if key is None else _part(key, 2, rng)
                outs[role, q].append((key, encode(record)))
            for table in sorted(fold.boards_changed):
                stats = fold.stats(table)
                assert stats is not None
                outs["table-stats", _part(table.encode(), 2, rng)].append(
                    (table.encode(), encode(stats))
                )
            fold.boards_changed.clear()
    spans: dict[str, list[Span]] = {}
    kept: list[Kept] = []
    for n, ((kind, p), messages) in enumerate(sorted(inputs.items())):
        start = int(len(messages) * cuts[n])
        spans.setdefault(kind, []).append(
            Span(topic=kind, partition=p, start=start, end=len(messages))
        )
        kept += [
            Kept(kind=kind, partition=p, offset=o, value=raw)  # type: ignore[arg-type]
            for o, (_, raw) in enumerate(messages)
            if o >= start
        ]
    found: dict[str, list[tuple[bytes | None, bytes]]] = {}
    for n, ((role, q), messages) in enumerate(sorted(outs.items())):
        start = int(len(messages) * out_cuts[n])
        spans.setdefault(role, []).append(
            Span(topic=role, partition=q, start=start, end=len(messages))
        )
        found.setdefault(role, []).extend(messages[start:])
    committed = Outputs(
        settlements=[v for _, v in found["settlements"]],
        refunds=[v for _, v in found["refunds"]],
        adjustments=[v for _, v in found["adjustments"]],
        rejected=[v for _, v in found["rejected"]],
        rejected_keys=[k for k, _ in found["rejected"]],
        table_stats={k.decode(): v for k, v in found["table-stats"] if k is not None},
    )
    judged = judge(kept, spans, committed, horizon=200)
    assert judged.report.findings == []
    if all(c == 0 for c in cuts) and all(c == 0 for c in out_cuts):
        assert judged.report.not_checkable == 0


def test_a_full_board_of_results_inside_the_window_is_still_checked() -> None:
    rounds = [raw for r in range(1, 54) for raw in sicbo_round([2, 2, 5], 0, round_id=f"R{r}")]
    committed = _committed(rounds, [])
    # rounds[0] lost R1 and R2 whole and R3's opening; the last 50 results (R4 to R53) are kept
    judged = judge(_kept(rounds, [], 7, 0), _spans(len(rounds), 0, 7, 0), committed, horizon=200)
    assert judged.report.findings == []
    assert "table-stats" not in {u.topic for u in judged.report.unchecked}
    stale = _committed(rounds[:-3], [])
    moved = msgspec.structs.replace(committed, table_stats=stale.table_stats)
    judged = judge(_kept(rounds, [], 7, 0), _spans(len(rounds), 0, 7, 0), moved, horizon=200)
    assert [(f.kind, f.topic) for f in judged.report.findings] == [("differing", "table-stats")]


def test_the_window_starts_where_the_log_starts_after_the_read() -> None:
    read = [
        Message(
            topic="rounds",
            partition=0,
            offset=n,
            key=None,
            value=b"x",
            timestamp=1_764_583_200_000 + n,
        )
        for n in range(10)
    ]
    kept, spans = _window("rounds", read, {0: (4, 10), 1: (7, 7)})
    assert [m.offset for m in kept] == [4, 5, 6, 7, 8, 9]
    assert spans == [
        Span(
            topic="rounds",
            partition=0,
            start=4,
            end=10,
            first_offset=4,
            first_at="2025-12-01T10:00:00.004Z",
        ),
        Span(topic="rounds", partition=1, start=7, end=7),
    ]
    assert all(s.cut for s in spans)
