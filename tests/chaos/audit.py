"""After each fault: `croupier verify` in-process, the wallet emulator, and the workers' health."""

from __future__ import annotations

import time
from dataclasses import dataclass

from schemas.records import Adjustment, Refund, Settlement
from services.audit.compare import Outputs, Report, compare, outputs
from services.audit.console import text
from services.audit.reader import read_topic
from services.audit.verify import audit
from services.audit.wallet import Wallet
from services.settings import Settings
from services.settlement.fold import Fold
from tests.chaos.cluster import LOGS, SEED, Cluster, say, wait_caught_up


@dataclass(frozen=True, kw_only=True)
class Figures:
    """The line a fault prints: what went in, what was checked, what was wrong, what was done."""

    fault: str
    events_in: int
    checked: int
    missing: int
    duplicated: int
    differing: int
    unexpected: int
    pending: int
    kills: int
    seconds: float
    note: str = ""

    def line(self) -> str:
        return (
            f"{self.fault:<16} events in {self.events_in:>6}  records checked {self.checked:>6}  "
            f"missing {self.missing}  duplicated {self.duplicated}  differing {self.differing}  "
            f"unexpected {self.unexpected}  pending {self.pending}  kills {self.kills:>2}  "
            f"time {self.seconds:5.1f} s{'  ' + self.note if self.note else ''}"
        )


FIGURES: list[Figures] = []


def expected_wallet(settings: Settings, sent: list[tuple[str, bytes]]) -> Wallet:
    """Balances from the offline fold of what the publisher sent (rounds, then bets)."""
    fold = Fold(horizon=settings.horizon)
    wallet = Wallet()
    for kind in ("rounds", "bets"):
        for topic, raw in sent:
            if topic == kind:
                wallet.apply_all(
                    r
                    for r in fold.feed(kind, raw)
                    if isinstance(r, Settlement | Refund | Adjustment)
                )
    return wallet


def committed_credits(settings: Settings) -> list[bytes]:
    """Every committed settlement, refund and adjustment, as a wallet consumes them."""
    return [
        m.value
        for topic in (
            settings.topic_settlements,
            settings.topic_refunds,
            settings.topic_adjustments,
        )
        for m in read_topic(settings, topic, timeout=300)
    ]


def check(
    fault: str,
    cluster: Cluster,
    sent: list[tuple[str, bytes]],
    started: float,
    note: str = "",
) -> Figures:
    """Wait until the workers caught up, then prove nothing was lost, repeated or changed."""
    settings = cluster.settings
    say(f"{fault}: waiting for the workers to commit all {len(sent)} events")
    wait_caught_up(settings)
    say(f"{fault}: verifying")
    result = audit(settings, timeout=300)
    report = result.report
    wallet = Wallet()
    credits = committed_credits(settings)
    for raw in credits:
        wallet.apply_raw(raw)
    once = dict(wallet.balances)
    repeated = sum(wallet.apply_raw(raw) for raw in credits)
    problems = cluster.healthy()
    figures = Figures(
        fault=fault,
        events_in=result.events_in,
        checked=report.checked,
        missing=report.count("missing"),
        duplicated=report.count("duplicated"),
        differing=report.count("differing"),
        unexpected=report.count("unexpected"),
        pending=len(result.pending),
        kills=cluster.kills,
        seconds=time.monotonic() - started,
        note=note,
    )
    FIGURES.append(figures)
    say(figures.line())
    with open(LOGS / "figures.txt", "a") as out:
        out.write(f"seed {SEED} {figures.line()}\n")
    assert result.ok, text(result, 10)
    assert result.events_in == len(sent), (
        f"published {len(sent)}, the inputs hold {result.events_in}"
    )
    assert once == expected_wallet(settings, sent).balances, "wallet balances differ from the fold"
    assert repeated == 0 and wallet.balances == once, "a second delivery credited again"
    assert not wallet.conflicts, f"ids committed with two amounts: {wallet.conflicts[:5]}"
    assert not problems, f"unhealthy workers: {problems}"
    return figures


def audit_sent(settings: Settings, sent: list[tuple[str, bytes]]) -> Report:
    """The committed outputs against the offline fold of what was sent, as `croupier verify`
    compares them: for inputs whose start has been deleted, which verify can no longer read."""
    fold = Fold(horizon=settings.horizon)
    records = [
        record
        for kind in ("rounds", "bets")
        for topic, raw in sent
        if topic == kind
        for record in fold.feed(kind, raw)
    ]
    boards = [b for t in fold.tables if (b := fold.stats(t)) is not None]

    def read(topic: str) -> list[bytes]:
        return [m.value for m in read_topic(settings, topic, timeout=300)]

    stats = read_topic(settings, settings.topic_table_stats, timeout=300)
    found = Outputs(
        settlements=read(settings.topic_settlements),
        refunds=read(settings.topic_refunds),
        adjustments=read(settings.topic_adjustments),
        rejected=read(settings.topic_rejected),
        table_stats={
            "<no key>" if m.key is None else m.key.decode(errors="backslashreplace"): m.value
            for m in stats
        },
    )
    return compare(outputs(records, boards), found)


def check_sent(
    fault: str,
    cluster: Cluster,
    sent: list[tuple[str, bytes]],
    started: float,
    note: str = "",
) -> Figures:
    """What `check` proves, for inputs whose start was deleted: the committed output is exactly
    the offline fold of everything the publisher sent (the caller waits and checks health)."""
    report = audit_sent(cluster.settings, sent)
    figures = Figures(
        fault=fault,
        events_in=len(sent),
        checked=report.checked,
        missing=report.count("missing"),
        duplicated=report.count("duplicated"),
        differing=report.count("differing"),
        unexpected=report.count("unexpected"),
        pending=0,
        kills=cluster.kills,
        seconds=time.monotonic() - started,
        note=note,
    )
    FIGURES.append(figures)
    say(figures.line())
    with open(LOGS / "figures.txt", "a") as out:
        out.write(f"seed {SEED} {figures.line()}\n")
    assert report.ok, [f for f in report.findings[:10]]
    return figures
