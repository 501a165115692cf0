"""The example clients (examples/) against croupier on a real broker: a Go and a Java game
service publish and sign two tables' rounds, croupier's workers settle them exactly as the offline
replay of what they sent, and the Go wallet, killed mid-stream and restarted, credits every
committed record once."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from services.audit.reader import committed_lag, read_topic
from services.partitioner import partition_of
from services.settings import Settings
from services.signing.keys import private_file, private_key
from services.wallet.consumer import consume
from services.wallet.ledger import Ledger
from tests.examples.clients import (
    MONEY_TOPICS,
    Binaries,
    Wallet,
    balances,
    committed,
    movement,
    publish,
    replay,
    signing_keys,
    store_ids,
)
from tests.kafka import ROOT, create_topics, isolated_settings, stop, wait_caught_up, workers
from tests.security.conftest import Secured

PARTITIONS = 4
WORKER = (sys.executable, "-m", "services.cli", "worker", "--loglevel", "warning")


@dataclass(frozen=True)
class Published:
    settings: Settings
    tables: tuple[str, str]
    expected: Counter[bytes]
    """The offline replay of what the publishers sent."""


@pytest.fixture(scope="module")
def published(
    kafka: str, binaries: Binaries, tmp_path_factory: pytest.TempPathFactory
) -> Published:
    """The Go publisher's table and the Java publisher's, settled by two workers."""
    folder = tmp_path_factory.mktemp("published")
    tag = uuid.uuid4().hex[:8]
    tables = (f"go-{tag}", f"java-{tag}")
    keys, private = signing_keys(folder, *tables)
    settings = isolated_settings(kafka, partitions=PARTITIONS, table_keys_file=str(keys))
    create_topics(settings)
    sent = [folder / f"{table}.sent.jsonl" for table in tables]
    publish([str(binaries.go_publisher)], settings, tables[0], private[tables[0]], sent[0])
    java = ["java", "-jar", str(binaries.java_publisher)]
    publish(java, settings, tables[1], private[tables[1]], sent[1])
    with workers(settings, 2):
        wait_caught_up(settings)
    return Published(settings=settings, tables=tables, expected=replay(keys, *sent))


def _kinds(records: Counter[bytes]) -> Counter[tuple[str, str]]:
    found: Counter[tuple[str, str]] = Counter()
    for raw, n in records.items():
        record = json.loads(raw)
        found[(record["type"], record.get("table_id") or record.get("reason", ""))] += n
    return found


def _table(raw: bytes) -> str:
    """The table of a record, or of the input a rejection quotes."""
    record = json.loads(raw)
    table: str = record.get("table_id") or json.loads(record["raw"]).get("table_id", "")
    return table


def test_the_java_publisher_signs_the_contracts_worked_example_byte_for_byte(
    binaries: Binaries, tmp_path: Path
) -> None:
    """Contract 14.6: the key whose seed is the bytes 0..31 signed the genuine result and the
    supervisor's correction (the Go publisher's `go test` checks the same)."""
    key = tmp_path / "sicbo-7.key.json"
    key.write_bytes(private_file("sicbo-7", private_key(bytes(range(32)))))
    signed = (ROOT / "docs/examples/signed.jsonl").read_text(encoding="utf-8")
    events = [json.loads(line) for line in signed.splitlines()]
    genuine = [e for e in events if e["event_id"] == "S1-result"] + [
        e for e in events if e.get("authorized_by") == "supervisor.ana"
    ]
    assert len(genuine) == 2
    for event in genuine:
        fields = [event[name] for name in ("type", "event_id", "table_id", "round_id", "at")]
        fields += ["-".join(map(str, event["dice"])), event.get("reason", "")]
        fields += [event.get("authorized_by", "")]
        done = subprocess.run(
            ["java", "-jar", str(binaries.java_publisher), "sign", str(key), *fields],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == event["sig"]


def test_the_workers_commit_exactly_the_replay_of_what_the_go_and_java_publishers_sent(
    published: Published,
) -> None:
    settings = published.settings
    topics = (*MONEY_TOPICS, "rejected")
    records = committed(settings, [getattr(settings, f"topic_{topic}") for topic in topics])
    assert records == published.expected
    kinds = _kinds(records)
    for table in published.tables:  # every kind of movement, and nothing rejected
        assert kinds[("settlement", table)] > 100
        assert kinds[("refund", table)] > 0
        assert kinds[("adjustment", table)] > 0
    assert not any(kind == "rejected" for kind, _ in kinds)


def test_both_publishers_put_each_table_on_its_murmur2_partition(published: Published) -> None:
    settings = published.settings
    seen: Counter[tuple[str, int]] = Counter()
    for topic in (settings.topic_rounds, settings.topic_bets):
        for message in read_topic(settings, topic):
            assert message.key is not None
            assert json.loads(message.value)["table_id"] == message.key.decode()
            assert message.partition == partition_of(message.key, PARTITIONS)
            seen[(message.key.decode(), message.partition)] += 1
    assert {table for table, _ in seen} == set(published.tables)


def test_the_go_wallet_killed_mid_stream_three_times_credits_every_record_once(
    published: Published, binaries: Binaries, tmp_path: Path
) -> None:
    settings = published.settings
    topics = [getattr(settings, f"topic_{topic}") for topic in MONEY_TOPICS]
    records = committed(settings, topics)
    ids = Counter(moved[0] for raw in records if (moved := movement(raw)) is not None)
    total = len(ids)
    group = f"wallet-go-{uuid.uuid4().hex[:8]}"
    store = tmp_path / "wallet.jsonl"
    killed_at = [0]
    with Wallet(binaries.go_wallet, settings, topics, group, store) as wallet:
        for _ in range(3):  # slowed down (7 records a batch, 0.1 s apart) to be cut mid-stream
            process = wallet.start("-batch", "7", "-pause", "100ms")
            n = wallet.wait_credited(process, killed_at[-1] + max(1, total // 5))
            process.send_signal(signal.SIGKILL)
            process.wait()
            killed_at.append(wallet.credited())
            assert killed_at[-2] < n <= killed_at[-1] < total, (killed_at, total)
        process = wallet.start()
        wallet.wait_credited(process, total)
        time.sleep(2)  # anything read twice would be credited by now
        wallet.stop(process)

    assert store_ids(store) == Counter(set(ids))
    found = wallet.balances()
    assert found == {"credited": total, "balances": balances(records)}
    assert committed_lag(settings, group, topics) == 0
    ledger = Ledger(str(tmp_path / "python-wallet.sqlite"))
    try:
        consume(ledger, settings, topics)
        python: dict[str, dict[str, int]] = {}
        for b in ledger.balances():
            python.setdefault(b.player_id, {})[b.currency] = b.balance
    finally:
        ledger.close()
    assert found["balances"] == python


def test_the_examples_publish_settle_and_credit_as_their_roles_on_the_secured_broker(
    secured: Secured, binaries: Binaries, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex[:8]
    tables = (f"go-{tag}", f"java-{tag}")
    keys, private = signing_keys(tmp_path, *tables)
    game = secured.settings("game")
    sent = [tmp_path / f"{table}.sent.jsonl" for table in tables]
    publish([str(binaries.go_publisher)], game, tables[0], private[tables[0]], sent[0])
    java = ["java", "-jar", str(binaries.java_publisher)]
    publish(java, game, tables[1], private[tables[1]], sent[1])
    log = tmp_path / "worker.log"
    env = secured.env("croupier") | {"CROUPIER_TABLE_KEYS_FILE": str(keys)}
    with open(log, "wb") as out:
        worker = subprocess.Popen(
            [*WORKER, "--web-port", "0"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_caught_up(secured.settings("croupier"))
    finally:
        stop(worker)
    assert "refused" not in log.read_text()

    records = committed(secured.settings("auditor"), [*MONEY_TOPICS, "rejected"])
    ours = Counter({raw: n for raw, n in records.items() if _table(raw) in tables})
    assert ours == replay(keys, *sent)
    assert len(ours) > 200
    money = [raw for raw in records if movement(raw) is not None]
    role = secured.settings("wallet")
    store = tmp_path / "wallet.jsonl"
    with Wallet(binaries.go_wallet, role, list(MONEY_TOPICS), f"wallet-go-{tag}", store) as wallet:
        process = wallet.start()
        wallet.wait_credited(process, len({movement(raw) for raw in money}))
        wallet.stop(process)
    assert wallet.balances()["balances"] == balances(money)
