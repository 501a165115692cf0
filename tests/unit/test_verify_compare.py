"""Worked examples of the audit's comparison: committed output against the offline fold."""

from __future__ import annotations

from msgspec.structs import replace

from schemas.codec import encode
from schemas.records import Refund, Settlement
from services.audit.compare import Finding, Outputs, compare, outputs
from services.settlement.fold import Fold
from tests.unit.builders import bet, bets, round_event, rounds, run, sicbo_round


def _fold() -> tuple[list[Settlement], Refund, bytes, Fold]:
    """Two settled bets (round R1, dice 4 5 6), one refunded late bet, one malformed input."""
    fold = Fold()
    records = run(
        [
            *rounds(*sicbo_round([4, 5, 6], last_seq=2)),
            *bets(bet(1, "big", stake=100), bet(2, "small", stake=50), bet(3, "big", stake=7)),
            ("bets", b"not json"),
        ],
        fold,
    )
    settlements = [r for r in records if isinstance(r, Settlement)]
    refund = next(r for r in records if isinstance(r, Refund))
    rejected = next(encode(r) for r in records if r not in settlements and r != refund)
    return settlements, refund, rejected, fold


def _with_rejected() -> Outputs:
    settlements, refund, rejected, fold = _fold()
    stats = fold.stats("T1")
    assert stats is not None
    out = outputs([*settlements, refund], [stats])
    return replace(out, rejected=[rejected])


def test_output_equal_to_the_fold_has_no_findings() -> None:
    expected = _with_rejected()
    report = compare(expected, expected)
    assert report.ok
    assert report.checked == report.expected == 5
    assert report.counts() == {"missing": 0, "duplicated": 0, "unexpected": 0, "differing": 0}


def test_a_settlement_never_committed_is_missing() -> None:
    expected = _with_rejected()
    win, loss = expected.settlements
    report = compare(expected, replace(expected, settlements=[win]))
    assert report.findings == [
        Finding(
            kind="missing",
            topic="settlements",
            key=_fold()[0][1].settlement_id,
            expected=loss.decode(),
        )
    ]
    assert report.count("missing") == 1


def test_an_id_committed_twice_is_duplicated_once_per_extra_copy() -> None:
    expected = _with_rejected()
    win = expected.settlements[0]
    found = replace(expected, settlements=[*expected.settlements, win, win])
    report = compare(expected, found)
    assert report.findings == [
        Finding(kind="duplicated", topic="settlements", key=_fold()[0][0].settlement_id, count=2)
    ]
    assert report.counts()["duplicated"] == 2


def test_a_settlement_with_another_payout_is_differing() -> None:
    settlements, _, _, _ = _fold()
    expected = _with_rejected()
    wrong = encode(replace(settlements[0], payout=settlements[0].payout + 1))
    found = replace(expected, settlements=[wrong, expected.settlements[1]])
    report = compare(expected, found)
    assert report.findings == [
        Finding(
            kind="differing",
            topic="settlements",
            key=settlements[0].settlement_id,
            expected=expected.settlements[0].decode(),
            found=wrong.decode(),
        )
    ]
    assert '"payout":200' in (report.findings[0].expected or "")
    assert '"payout":201' in (report.findings[0].found or "")


def test_a_refund_the_fold_never_made_is_unexpected() -> None:
    _, refund, _, _ = _fold()
    expected = _with_rejected()
    stranger = encode(replace(refund, refund_id="r-stranger", bet_id="T1-R1-99"))
    report = compare(expected, replace(expected, refunds=[*expected.refunds, stranger]))
    assert report.findings == [
        Finding(kind="unexpected", topic="refunds", key="r-stranger", found=stranger.decode())
    ]


def test_an_unreadable_record_is_unexpected() -> None:
    expected = _with_rejected()
    report = compare(expected, replace(expected, refunds=[*expected.refunds, b"\xff garbage"]))
    (finding,) = report.findings
    assert (finding.kind, finding.topic) == ("unexpected", "refunds")
    assert finding.key.startswith("<unreadable> sha1:")


def test_a_table_stats_older_than_the_last_round_is_differing() -> None:
    expected = _with_rejected()
    fold = Fold()
    run(rounds(*sicbo_round([1, 1, 2], last_seq=0, round_id="R0")), fold)
    stale = fold.stats("T1")
    assert stale is not None
    late = compare(expected, replace(expected, table_stats={"T1": encode(stale)}))
    assert [(f.kind, f.topic, f.key) for f in late.findings] == [("differing", "table-stats", "T1")]
    assert '"round_id":"R0"' in (late.findings[0].found or "")


def test_table_stats_of_a_table_without_results_is_missing_or_unexpected() -> None:
    expected = _with_rejected()
    board = expected.table_stats["T1"]
    moved = compare(expected, replace(expected, table_stats={"T9": board}))
    assert [(f.kind, f.key) for f in moved.findings] == [("missing", "T1"), ("unexpected", "T9")]


def test_rejections_compare_as_a_multiset_of_their_content() -> None:
    expected = _with_rejected()
    (dead,) = expected.rejected
    twice = compare(expected, replace(expected, rejected=[dead, dead]))
    assert [(f.kind, f.count) for f in twice.findings] == [("duplicated", 1)]
    none = compare(expected, replace(expected, rejected=[]))
    assert [(f.kind, f.topic) for f in none.findings] == [("missing", "rejected")]
    other = dead.replace(b"not json", b"not json!")
    swapped = compare(expected, replace(expected, rejected=[other]))
    assert sorted(f.kind for f in swapped.findings) == ["missing", "unexpected"]


def test_a_refund_written_to_settlements_is_missing_there_and_unexpected_here() -> None:
    expected = _with_rejected()
    found = replace(expected, refunds=[], settlements=[*expected.settlements, *expected.refunds])
    kinds = sorted((f.kind, f.topic) for f in compare(expected, found).findings)
    assert kinds == [("missing", "refunds"), ("unexpected", "settlements")]


def test_a_long_record_is_shown_as_an_excerpt() -> None:
    expected = Outputs(rejected=[b'{"raw":"' + b"x" * 5000 + b'"}'])
    (finding,) = compare(expected, Outputs()).findings
    assert finding.expected is not None
    assert finding.expected.endswith("... (5010 bytes)")
    assert len(finding.expected) < 500


def test_a_cancelled_round_refunds_are_compared_by_refund_id() -> None:
    fold = Fold()
    records = run(
        [
            *rounds(round_event("opened", game="sicbo"), round_event("cancelled", reason="x")),
            *bets(bet(1), bet(2)),
        ],
        fold,
    )
    expected = outputs(records)
    assert len(expected.refunds) == 2
    report = compare(expected, replace(expected, refunds=list(reversed(expected.refunds))))
    assert report.ok
