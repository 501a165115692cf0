"""Every metric croupier exports is scraped, on the dashboard and explained; alerts name real ones."""

from __future__ import annotations

import json
import re
from collections import Counter

from services.history.tally import exposition
from services.settlement.metrics import Metrics, render
from tests.k8s.manifests import K8S, OVERLAYS, ROOT, find, of_kind, overlay

NAME = re.compile(r"\bcroupier_[a-z_]+")


def exported() -> dict[str, str]:
    """Metric families of the worker's and the read side's /metrics, with their types."""
    worker = Metrics(
        events_in=Counter(rounds=1), decisions=Counter(settlement=1), rejections=Counter(bad=1)
    )
    text = render(worker, 1, 0) + exposition({}, pending=0, lag=0)
    return dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))


def _series(family: str, kind: str) -> set[str]:
    return (
        {f"{family}_{s}" for s in ("bucket", "sum", "count")} if kind == "histogram" else {family}
    )


def _dashboard() -> dict[str, object]:
    return json.loads((K8S / "base" / "dashboard.json").read_text())


def _expressions() -> list[str]:
    return [t["expr"] for p in _dashboard()["panels"] for t in p.get("targets", [])]  # type: ignore[attr-defined]


def test_the_exported_metrics_are_the_ones_this_test_knows() -> None:
    assert sorted(exported()) == [
        "croupier_commit_seconds_total",
        "croupier_decisions_total",
        "croupier_events_in_total",
        "croupier_gc_collections_total",
        "croupier_gc_seconds_total",
        "croupier_loop_seconds_total",
        "croupier_misrouted_total",
        "croupier_pending_bets",
        "croupier_read_decision_latency_seconds",
        "croupier_read_decisions_total",
        "croupier_read_events_total",
        "croupier_read_integrity_verdict",
        "croupier_read_lag_messages",
        "croupier_read_pending_bets",
        "croupier_read_rejections_total",
        "croupier_read_unreadable_total",
        "croupier_records_out_total",
        "croupier_rejections_total",
        "croupier_state_bytes_total",
        "croupier_state_records_total",
        "croupier_tasks",
        "croupier_tasks_blocked",
        "croupier_transactions_total",
    ]


def test_every_exported_metric_is_on_the_dashboard() -> None:
    used = {name for expr in _expressions() for name in NAME.findall(expr)}
    for family, kind in exported().items():
        assert used & _series(family, kind), f"{family} is on no panel"


def test_the_dashboard_and_the_alerts_name_only_metrics_that_exist() -> None:
    known = {s for family, kind in exported().items() for s in _series(family, kind)}
    rules = find(overlay("local"), "PrometheusRule", "croupier")
    alerts = [r["expr"] for g in rules["spec"]["groups"] for r in g["rules"]]
    for expr in _expressions() + alerts:
        assert set(NAME.findall(expr)) <= known, expr


def test_every_exported_metric_and_every_alert_is_explained_in_operations() -> None:
    text = (ROOT / "docs" / "OPERATIONS.md").read_text()
    for family in exported():
        assert f"`{family}`" in text, family
    rules = find(overlay("local"), "PrometheusRule", "croupier")
    for group in rules["spec"]["groups"]:
        for rule in group["rules"]:
            assert f"`{rule['alert']}`" in text, rule["alert"]


def test_the_alerts_cover_blocked_tasks_lag_rejections_and_workers_down() -> None:
    rules = find(overlay("production"), "PrometheusRule", "croupier")
    exprs = {r["alert"]: r["expr"] for g in rules["spec"]["groups"] for r in g["rules"]}
    assert "croupier_tasks_blocked" in exprs["CroupierTaskBlocked"]
    assert (
        'kafka_consumergroup_lag{consumergroup="croupier-settlement"}'
        in exprs["CroupierConsumerLag"]
    )
    assert "croupier_rejections_total" in exprs["CroupierRejectedRate"]
    assert 'up{job="croupier-worker"}' in exprs["CroupierWorkerDown"]
    assert all(
        r.get("labels", {}).get("severity") in {"warning", "critical"}
        for g in rules["spec"]["groups"]
        for r in g["rules"]
    )


def test_the_monitors_scrape_the_ports_that_serve_metrics() -> None:
    for name in OVERLAYS:
        objects = overlay(name)
        for monitor in of_kind(objects, "ServiceMonitor"):
            services = [
                s
                for s in of_kind(objects, "Service")
                if monitor["spec"]["selector"]["matchLabels"].items()
                <= s["metadata"]["labels"].items()
            ]
            assert len(services) == 1, monitor["metadata"]["name"]
            ports = {p["name"] for p in services[0]["spec"]["ports"]}
            assert {e["port"] for e in monitor["spec"]["endpoints"]} <= ports
            assert {e["path"] for e in monitor["spec"]["endpoints"]} == {"/metrics"}
        # the job label the alerts and the dashboard filter on is the Service's name
        assert {s["metadata"]["name"] for s in of_kind(objects, "Service")} >= {
            "croupier-worker",
            "croupier-api",
        }


def test_the_dashboard_is_a_config_map_grafana_picks_up() -> None:
    for name in OVERLAYS:
        config = find(overlay(name), "ConfigMap", "croupier-dashboard")
        assert config["metadata"]["labels"] == {"grafana_dashboard": "1"}
        assert json.loads(config["data"]["croupier.json"]) == _dashboard()
    ids = [p["id"] for p in _dashboard()["panels"]]  # type: ignore[attr-defined]
    assert len(ids) == len(set(ids))
