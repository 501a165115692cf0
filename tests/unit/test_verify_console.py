"""What `croupier verify` prints: figures, each finding, pending bets, and a verdict."""

from __future__ import annotations

import json

from services.audit.compare import Finding, Report
from services.audit.console import summary_json, text
from services.audit.pending import PendingBet
from services.audit.verify import Audit

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
