"""What `croupier verify` prints: figures, each finding, pending bets, and a verdict."""

from __future__ import annotations

import json

import msgspec

from services.audit.compare import Finding, Report, Unchecked
from services.audit.console import summary_json, text
from services.audit.pending import PendingBet
from services.audit.verify import Audit, Window
from services.audit.window import OPENED_BEFORE, Span

_BET = PendingBet(
    bet_id="W1-b1",
    table_id="WAIT",
    round_id="W1",
    player_id="P2",
    stake=100,
    currency="EUR",
    at="2026-12-01T10:00:30Z",
    age_s=90.0,
    wall_age_s=2 * 86400.0,
)


def _audit(findings: list[Finding]) -> Audit:
    return Audit(
        bootstrap="127.0.0.1:9092",
        events_in=12,
        report=Report(expected=5, checked=6, findings=findings),
        pending=[_BET],
        newest_at="2026-12-01T10:02:00+00:00",
        seconds=1.25,
    )


def test_an_agreeing_cluster_says_ok_and_lists_its_pending_bets() -> None:
    out = text(_audit([]), limit=20)
    assert "0 missing, 0 duplicated, 0 unexpected, 0 differing" in out
    assert "PENDING W1-b1 (WAIT/W1, P2, 100 EUR) placed 2026-12-01T10:00:30Z: 1.5 min behind" in out
    assert "2.0 d by the wall clock" in out
    assert out.endswith("OK: the committed output is exactly what the offline fold computes\n")


def test_each_finding_is_listed_up_to_the_limit_and_the_verdict_fails() -> None:
    findings = [
        Finding(kind="duplicated", topic="settlements", key="s1", count=2),
        Finding(kind="missing", topic="refunds", key="r1", expected='{"refund_id":"r1"}'),
    ]
    out = text(_audit(findings), limit=1)
    assert "DUPLICATED x2 settlements s1" in out
    assert "MISSING" not in out
    assert "... and 1 more findings" in out
    assert "FAILED: 2 findings" in out


def test_the_json_summary_counts_findings_by_kind_and_topic() -> None:
    findings = [
        Finding(kind="duplicated", topic="settlements", key="s1", count=2),
        Finding(kind="differing", topic="table-stats", key="T1", expected="a", found="b"),
    ]
    data = json.loads(summary_json(_audit(findings), limit=5))
    assert data["ok"] is False
    assert data["counts"] == {"missing": 0, "duplicated": 2, "unexpected": 0, "differing": 1}
    assert data["by_topic"]["table-stats"]["differing"] == 1
    assert data["findings"][0] == {
        "kind": "duplicated",
        "topic": "settlements",
        "key": "s1",
        "count": 2,
    }
    assert data["pending"][0]["age_s"] == 90.0


def _windowed() -> Audit:
    inputs = [
        Span(
            topic="rounds",
            partition=0,
            start=120,
            end=400,
            first_offset=120,
            first_at="2026-12-01T09:00:00.000Z",
        ),
        Span(
            topic="rounds",
            partition=1,
            start=0,
            end=380,
            first_offset=0,
            first_at="2026-11-24T09:00:00.000Z",
        ),
        Span(
            topic="bets",
            partition=0,
            start=0,
            end=900,
            first_offset=0,
            first_at="2026-11-24T09:00:01.000Z",
        ),
        Span(topic="bets", partition=1, start=900, end=900),
    ]
    outputs = [
        Span(
            topic="settlements",
            partition=1,
            start=50,
            end=800,
            first_offset=50,
            first_at="2026-12-01T09:00:02.000Z",
        )
    ]
    unchecked = [
        Unchecked(topic="settlements", reason=OPENED_BEFORE, count=40),
        Unchecked(topic="refunds", reason=OPENED_BEFORE, count=2),
    ]
    return msgspec.structs.replace(
        _audit([]),
        report=Report(expected=5, checked=6, findings=[], unchecked=unchecked),
        window=Window(inputs=inputs, outputs=outputs),
        pending_unchecked=3,
    )


def test_a_window_is_listed_partition_by_partition_with_what_could_not_be_checked() -> None:
    out = text(_windowed(), limit=20)
    assert "  window   input checked from (other input partitions from offset 0):\n" in out
    assert (
        "rounds[0] from offset 120 (first kept at 2026-12-01T09:00:00.000Z; log start 120, end 400)"
        in out
    )
    assert "bets[1] from offset 900: nothing kept (end 900)" in out
    assert "rounds[1]" not in out and "bets[0]" not in out
    assert "settlements[1] from offset 50 (first kept at 2026-12-01T09:00:02.000Z" in out
    assert "  not checkable  42 records (never counted as findings)" in out
    assert f"40 settlements: {OPENED_BEFORE}" in out
    assert "3 waiting bets of rounds that cannot be checked" in out
    assert out.endswith(
        "OK: every record the window lets us check is exactly what the offline fold computes "
        "(42 could not be checked, listed above)\n"
    )


def test_the_json_summary_gives_the_window_and_the_not_checkable_counts() -> None:
    data = json.loads(summary_json(_windowed(), limit=5))
    assert data["ok"] is True
    assert data["window"]["whole"] is False
    assert data["window"]["inputs"][0] == {
        "topic": "rounds",
        "partition": 0,
        "start": 120,
        "end": 400,
        "first_offset": 120,
        "first_at": "2026-12-01T09:00:00.000Z",
    }
    assert data["not_checkable_total"] == 42
    assert data["not_checkable"][0] == {
        "topic": "settlements",
        "reason": OPENED_BEFORE,
        "count": 40,
    }
    assert data["pending_not_checkable"] == 3


def test_a_whole_history_says_so() -> None:
    out = text(_audit([]), limit=20)
    assert "  window   every partition from offset 0 (the whole history)\n" in out
    assert json.loads(summary_json(_audit([]), limit=5))["window"]["whole"] is True
