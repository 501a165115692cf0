"""`croupier wallet` on a real broker: committed records only, each id credited once, re-runs
change no balance."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import msgspec
from kafka import KafkaProducer  # type: ignore[import-untyped]

from services.settings import Settings
from services.wallet.ledger import Ledger
from tests.kafka import ROOT, create_topics, environment, isolated_settings
from tests.unit.test_wallet_ledger import balances, expected, records


def _write(settings: Settings, raws: list[bytes], *, commit: bool) -> None:
    """The records in one transaction, keyed by player as croupier writes them."""
    producer = KafkaProducer(
        bootstrap_servers=settings.kafka_bootstrap,
        transactional_id=f"{settings.transactional_prefix}-test-{uuid.uuid4().hex[:6]}",
        enable_idempotence=True,
        acks="all",
    )
    try:
        producer.init_transactions()
        producer.begin_transaction()
        for raw in raws:
            record = msgspec.json.decode(raw)
            topic = (
                settings.topic_settlements
                if record["type"] == "settlement"
                else settings.topic_refunds
            )
            producer.send(topic, value=raw, key=record["player_id"].encode())
        producer.flush()
        if commit:
            producer.commit_transaction()
        else:
            producer.abort_transaction()
    finally:
        producer.close()


def _wallet(settings: Settings, db: Path, *options: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "wallet", "--db", str(db), *options],
        cwd=ROOT,
        env=environment(settings),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stderr + done.stdout


def test_running_the_wallet_twice_over_the_same_topics_changes_no_balance(
    kafka: str, tmp_path: Path
) -> None:
    settings = isolated_settings(kafka, partitions=3)
    create_topics(settings)
    raws = records()
    _write(settings, raws, commit=True)
    _write(settings, raws[::3], commit=True)  # a producer that wrote some records twice
    aborted = raws[0].replace(b'"player_id":"', b'"player_id":"ABORTED-')
    _write(settings, [aborted], commit=False)
    db = tmp_path / "wallet.sqlite"
    total = len(raws) + len(raws[::3])

    first = _wallet(settings, db)
    assert f"{total} records read, {len(raws)} credited, {len(raws[::3])} already credited" in first
    ledger = Ledger(str(db))
    once = balances(ledger)
    assert once == expected(raws)
    assert not [p for p, _ in once if p.startswith("ABORTED")]
    ledger.close()

    again = _wallet(settings, db)
    assert "0 records read, 0 credited" in again
    from_start = _wallet(settings, db, "--from-beginning", "--report")
    assert f"{total} records read, 0 credited, {total} already credited" in from_start
    assert "TOTAL" in from_start
    ledger = Ledger(str(db))
    assert balances(ledger) == once
    ledger.close()
