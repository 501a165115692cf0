"""What /metrics returns, pinned byte for byte: declaring the metric families once (for the
renderers and docs/reference/metrics.md alike) changed no byte of the worker's or the read side's
exposition; only the two help texts that misdescribed their metric changed since, on purpose."""

from __future__ import annotations

from collections import Counter

from services.collector import Collections
from services.history.tally import LATENCY, exposition
from services.settlement.metrics import Metrics, render
from services.statistics.integrity import Finding

WORKER = """\
# HELP croupier_tasks Tasks (input partitions) this worker runs.
# TYPE croupier_tasks gauge
croupier_tasks 3
# HELP croupier_tasks_blocked Tasks assigned here that refuse to run (see /health).
# TYPE croupier_tasks_blocked gauge
croupier_tasks_blocked 1
# HELP croupier_pending_bets Bets read and waiting for their round's fate.
# TYPE croupier_pending_bets gauge
croupier_pending_bets 9
# HELP croupier_transactions_total Transactions committed.
# TYPE croupier_transactions_total counter
croupier_transactions_total 11
# HELP croupier_records_out_total Records committed (outputs, accepted, state).
# TYPE croupier_records_out_total counter
croupier_records_out_total 90
# HELP croupier_commit_seconds_total Time spent folding and committing batches.
# TYPE croupier_commit_seconds_total counter
croupier_commit_seconds_total 1.234568
# HELP croupier_state_records_total State changelog records written.
# TYPE croupier_state_records_total counter
croupier_state_records_total 12
# HELP croupier_state_bytes_total State changelog bytes written.
# TYPE croupier_state_bytes_total counter
croupier_state_bytes_total 3456
# HELP croupier_loop_seconds_total Time the consume-fold-produce loop spent, by part (read: idle time too, fold, produce, wait: for the previous transaction's commit).
# TYPE croupier_loop_seconds_total counter
croupier_loop_seconds_total{part="read"} 0.500000
croupier_loop_seconds_total{part="fold"} 2.250000
croupier_loop_seconds_total{part="produce"} 0.000000
croupier_loop_seconds_total{part="wait"} 0.125000
# HELP croupier_gc_collections_total Full collections of cyclic garbage, run on a clock (automatic collection is off).
# TYPE croupier_gc_collections_total counter
croupier_gc_collections_total 2
# HELP croupier_gc_seconds_total Time the full collections took.
# TYPE croupier_gc_seconds_total counter
croupier_gc_seconds_total 0.031250
# HELP croupier_events_in_total Input events read, by topic.
# TYPE croupier_events_in_total counter
croupier_events_in_total{topic="bets"} 40
croupier_events_in_total{topic="rounds"} 7
# HELP croupier_decisions_total Settlements, refunds and adjustments written, by kind (settlement, refund:<reason>, adjustment:<cause>).
# TYPE croupier_decisions_total counter
croupier_decisions_total{kind="adjustment:correction"} 1
croupier_decisions_total{kind="refund:late_bet"} 2
croupier_decisions_total{kind="settlement"} 30
# HELP croupier_rejections_total Inputs rejected, by reason.
# TYPE croupier_rejections_total counter
croupier_rejections_total{reason="duplicate_seq"} 1
croupier_rejections_total{reason="malformed"} 3
# HELP croupier_misrouted_total Inputs read from a partition other than their table's and forwarded there, by topic and the partition they were read from (their producer's partitioner is not Kafka's murmur2).
# TYPE croupier_misrouted_total counter
croupier_misrouted_total{topic="bets",partition="0"} 9
croupier_misrouted_total{topic="bets",partition="2"} 4
croupier_misrouted_total{topic="rounds",partition="2"} 1
"""

READ_SIDE = """\
# HELP croupier_read_events_total Messages the projector consumed, by topic.
# TYPE croupier_read_events_total counter
croupier_read_events_total{topic="accepted"} 12
croupier_read_events_total{topic="rejected"} 2
# HELP croupier_read_unreadable_total Messages the projector could not decode and skipped, by topic.
# TYPE croupier_read_unreadable_total counter
# HELP croupier_read_decisions_total Distinct bet decisions read from the workers' journals, by kind and outcome.
# TYPE croupier_read_decisions_total counter
croupier_read_decisions_total{kind="settlement",outcome="win"} 5
# HELP croupier_read_rejections_total Records read from the rejected topic, by reason.
# TYPE croupier_read_rejections_total counter
croupier_read_rejections_total{reason="malformed"} 2
# HELP croupier_read_pending_bets Confirmed bets with no settlement or refund yet.
# TYPE croupier_read_pending_bets gauge
croupier_read_pending_bets 4
# HELP croupier_read_lag_messages Committed messages not projected yet.
# TYPE croupier_read_lag_messages gauge
croupier_read_lag_messages 17
# HELP croupier_read_decision_latency_seconds Time from the at of the round event that decided each bet (its result or cancellation, by the table's clock) to the Kafka timestamp of the bet's settlement or refund; 0 when the table's clock is ahead.
# TYPE croupier_read_decision_latency_seconds histogram
croupier_read_decision_latency_seconds_bucket{le="0.005"} 1
croupier_read_decision_latency_seconds_bucket{le="0.010"} 1
croupier_read_decision_latency_seconds_bucket{le="0.025"} 1
croupier_read_decision_latency_seconds_bucket{le="0.050"} 1
croupier_read_decision_latency_seconds_bucket{le="0.100"} 1
croupier_read_decision_latency_seconds_bucket{le="0.250"} 4
croupier_read_decision_latency_seconds_bucket{le="0.500"} 4
croupier_read_decision_latency_seconds_bucket{le="1.000"} 4
croupier_read_decision_latency_seconds_bucket{le="2.500"} 4
croupier_read_decision_latency_seconds_bucket{le="5.000"} 4
croupier_read_decision_latency_seconds_bucket{le="10.000"} 4
croupier_read_decision_latency_seconds_bucket{le="30.000"} 4
croupier_read_decision_latency_seconds_bucket{le="60.000"} 5
croupier_read_decision_latency_seconds_bucket{le="+Inf"} 6
croupier_read_decision_latency_seconds_sum 70.123
croupier_read_decision_latency_seconds_count 6
# HELP croupier_read_integrity_verdict The verdict of each outcome integrity test of each table, dealer and shaker over its last 2000 counted rounds (GET /integrity): 0 ok or too_few, 1 watch, 2 alarm.
# TYPE croupier_read_integrity_verdict gauge
croupier_read_integrity_verdict{scope="dealer",id="D\\"3\\\\",game="xocdia",test="reds"} 2
croupier_read_integrity_verdict{scope="table",id="SB-01",game="sicbo",test="faces"} 1
croupier_read_integrity_verdict{scope="table",id="SB-01",game="sicbo",test="totals"} 0
croupier_read_integrity_verdict{scope="table",id="XD-01",game="xocdia",test="reds"} 0
"""

READ_SIDE_STARTING = """\
# HELP croupier_read_events_total Messages the projector consumed, by topic.
# TYPE croupier_read_events_total counter
# HELP croupier_read_unreadable_total Messages the projector could not decode and skipped, by topic.
# TYPE croupier_read_unreadable_total counter
# HELP croupier_read_decisions_total Distinct bet decisions read from the workers' journals, by kind and outcome.
# TYPE croupier_read_decisions_total counter
# HELP croupier_read_rejections_total Records read from the rejected topic, by reason.
# TYPE croupier_read_rejections_total counter
# HELP croupier_read_pending_bets Confirmed bets with no settlement or refund yet.
# TYPE croupier_read_pending_bets gauge
croupier_read_pending_bets 0
# HELP croupier_read_decision_latency_seconds Time from the at of the round event that decided each bet (its result or cancellation, by the table's clock) to the Kafka timestamp of the bet's settlement or refund; 0 when the table's clock is ahead.
# TYPE croupier_read_decision_latency_seconds histogram
croupier_read_decision_latency_seconds_bucket{le="0.005"} 0
croupier_read_decision_latency_seconds_bucket{le="0.010"} 0
croupier_read_decision_latency_seconds_bucket{le="0.025"} 0
croupier_read_decision_latency_seconds_bucket{le="0.050"} 0
croupier_read_decision_latency_seconds_bucket{le="0.100"} 0
croupier_read_decision_latency_seconds_bucket{le="0.250"} 0
croupier_read_decision_latency_seconds_bucket{le="0.500"} 0
croupier_read_decision_latency_seconds_bucket{le="1.000"} 0
croupier_read_decision_latency_seconds_bucket{le="2.500"} 0
croupier_read_decision_latency_seconds_bucket{le="5.000"} 0
croupier_read_decision_latency_seconds_bucket{le="10.000"} 0
croupier_read_decision_latency_seconds_bucket{le="30.000"} 0
croupier_read_decision_latency_seconds_bucket{le="60.000"} 0
croupier_read_decision_latency_seconds_bucket{le="+Inf"} 0
croupier_read_decision_latency_seconds_sum 0.000
croupier_read_decision_latency_seconds_count 0
# HELP croupier_read_integrity_verdict The verdict of each outcome integrity test of each table, dealer and shaker over its last 2000 counted rounds (GET /integrity): 0 ok or too_few, 1 watch, 2 alarm.
# TYPE croupier_read_integrity_verdict gauge
"""


def _busy_worker() -> Metrics:
    return Metrics(
        events_in=Counter({"rounds": 7, "bets": 40}),
        decisions=Counter({"settlement": 30, "refund:late_bet": 2, "adjustment:correction": 1}),
        rejections=Counter({"malformed": 3, "duplicate_seq": 1}),
        pending={0: 4, 3: 5},
        transactions=11,
        records_out=90,
        commit_seconds=1.2345678,
        state_records=12,
        state_bytes=3456,
        loop_seconds={"read": 0.5, "fold": 2.25, "produce": 0.0, "wait": 0.125},
        misrouted=Counter({("bets", 2): 4, ("rounds", 2): 1, ("bets", 0): 9}),
        collections=Collections(runs=2, seconds=0.03125, freed=7),
    )


def test_a_workers_metrics_text_is_exactly_the_pinned_exposition() -> None:
    assert render(_busy_worker(), 3, 1) == WORKER


def test_the_read_sides_metrics_text_is_exactly_the_pinned_exposition() -> None:
    counters = {
        ("croupier_read_events_total", '{topic="accepted"}'): 12,
        ("croupier_read_events_total", '{topic="rejected"}'): 2,
        ("croupier_read_decisions_total", '{kind="settlement",outcome="win"}'): 5,
        ("croupier_read_rejections_total", '{reason="malformed"}'): 2,
        (f"{LATENCY}_bucket", "5"): 1,
        (f"{LATENCY}_bucket", "250"): 3,
        (f"{LATENCY}_bucket", "60000"): 1,
        (f"{LATENCY}_sum", ""): 70123,
        (f"{LATENCY}_count", ""): 6,
    }
    verdicts = [
        ("dealer", 'D"3\\', "xocdia", "reds", "alarm"),
        ("table", "SB-01", "sicbo", "faces", "watch"),
    ]
    verdicts += [
        ("table", "SB-01", "sicbo", "totals", "ok"),
        ("table", "XD-01", "xocdia", "reds", "too_few"),
    ]
    integrity = [
        Finding(scope=scope, id=name, game=game, test=test, rounds=100, statistic=1.0, df=4,
                p_value=0.5, verdict=verdict)  # the gauge shows the verdict alone
        for scope, name, game, test, verdict in verdicts
    ]  # fmt: skip
    assert exposition(counters, pending=4, lag=17, integrity=integrity) == READ_SIDE


def test_the_read_side_leaves_out_the_lag_while_its_positions_are_unknown() -> None:
    assert exposition({}, pending=0, lag=None) == READ_SIDE_STARTING
