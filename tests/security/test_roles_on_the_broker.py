"""Each role can do its job on the secured broker, and is refused one step beyond it, at once and
with an error that names the principal, the resource and the permission."""

from __future__ import annotations

import contextlib
import io
import logging
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kafka import KafkaProducer  # type: ignore[import-untyped]
from kafka.admin import KafkaAdminClient  # type: ignore[import-untyped]
from kafka.errors import KafkaError  # type: ignore[import-untyped]
from pydantic import SecretStr
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from services.audit.reader import read_topic
from services.history.store import connect
from services.publisher.producer import Publisher
from services.security import clients
from services.security.acls import apply
from services.security.denied import AccessDenied, explain
from services.security.login import check
from services.settings import Settings
from services.wallet.consumer import consume
from services.wallet.ledger import Ledger
from tests.kafka import ROOT, stop
from tests.security.conftest import Secured
from tests.security.events import round_of
from tests.security.flows import settle_as_roles

REFUSED_WITHIN = 10.0
"""Seconds a refusal may take: it is said at once, never after a client's long timeout."""


def _write(settings: Settings, topic: str) -> None:
    producer = KafkaProducer(**clients.kafka_python(settings), acks="all", max_block_ms=10_000)
    try:
        producer.send(topic, value=b"{}", key=b"T1").get(timeout=10)
    finally:
        producer.close(timeout=5)


def _refused_write(settings: Settings, topic: str) -> AccessDenied:
    """Write to a topic expecting the brokers' refusal; the refusal, explained."""
    started = time.monotonic()
    with pytest.raises(KafkaError) as caught:
        _write(settings, topic)
    assert time.monotonic() - started < REFUSED_WITHIN
    denied = explain(
        caught.value,
        settings,
        doing=f"write to {topic}",
        resource=f"topic {topic}",
        operation="Write",
    )
    assert denied is not None, f"not recognised as a refusal: {caught.value!r}"
    return denied


def croupier(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[bytes]:
    """`croupier <args>` started in the environment, its output into `log`."""
    with open(log, "wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "services.cli", *args],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def test_the_game_role_publishes_rounds_and_bets(secured: Secured) -> None:
    game = secured.settings("game")
    with Publisher.from_settings(game) as publisher:
        for event in round_of("T-game", "R1", stake=100):
            publisher.publish(event)
    assert publisher.counts["rounds"] == 3
    assert publisher.counts["bets"] == 1


def test_the_game_role_may_not_write_settlements(secured: Secured) -> None:
    denied = _refused_write(secured.settings("game"), "settlements")
    assert "User:game" in str(denied)
    assert "settlements" in str(denied) and "Write" in str(denied)


def test_the_croupier_role_may_not_write_rounds(secured: Secured) -> None:
    denied = _refused_write(secured.settings("croupier"), "rounds")
    assert "User:croupier" in str(denied) and "rounds" in str(denied)


def test_the_wallet_role_reads_settlements_but_may_write_nothing(
    secured: Secured, tmp_path: Path
) -> None:
    wallet = secured.settings("wallet")
    ledger = Ledger(str(tmp_path / "wallet.sqlite"))
    try:
        consume(ledger, wallet, ["settlements", "refunds", "adjustments"])
    finally:
        ledger.close()
    for topic in ("settlements", "rounds"):
        denied = _refused_write(wallet, topic)
        assert "User:wallet" in str(denied)


def test_the_readside_role_reads_what_the_projector_reads_and_not_bets_or_settlements(
    secured: Secured,
) -> None:
    readside = secured.settings("readside")
    for topic in readside.projected:
        list(read_topic(readside, topic, timeout=30))
    for topic in (readside.topic_bets, readside.topic_settlements):
        started = time.monotonic()
        with pytest.raises(AccessDenied) as caught:
            list(read_topic(readside, topic, timeout=30))
        assert time.monotonic() - started < REFUSED_WITHIN
        message = str(caught.value)
        assert "User:readside" in message and topic in message and "Read" in message


def test_the_auditor_reads_every_topic_and_may_write_none(secured: Secured) -> None:
    auditor = secured.settings("auditor")
    for topic in (*auditor.inputs, *auditor.outputs, auditor.topic_state):
        list(read_topic(auditor, topic, timeout=30))
    denied = _refused_write(auditor, "rounds")
    assert "User:auditor" in str(denied)


def test_a_client_without_a_login_is_refused_at_once(secured: Secured) -> None:
    anonymous = Settings(kafka_bootstrap=secured.bootstrap)
    started = time.monotonic()
    with pytest.raises(AccessDenied) as caught:
        check(anonymous)
    assert time.monotonic() - started < REFUSED_WITHIN
    assert "ANONYMOUS" in str(caught.value) and "SASL_SSL" in str(caught.value)


def test_a_wrong_password_is_refused_at_once(secured: Secured) -> None:
    wrong = secured.settings("game").model_copy(
        update={"kafka_password": SecretStr("not-the-password")}
    )
    started = time.monotonic()
    with pytest.raises(AccessDenied) as caught:
        check(wrong)
    assert time.monotonic() - started < REFUSED_WITHIN
    assert "User:game could not log in" in str(caught.value)
    assert "not-the-password" not in str(caught.value)


def test_a_command_with_a_wrong_password_exits_2_saying_who_was_refused(
    secured: Secured, tmp_path: Path
) -> None:
    password = tmp_path / "wrong.password"
    password.write_text("not-the-password\n")
    env = {**secured.env("wallet"), "CROUPIER_KAFKA_PASSWORD_FILE": str(password)}
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "wallet", "--db", str(tmp_path / "w.sqlite")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "User:wallet could not log in" in done.stderr
    assert "not-the-password" not in done.stderr + done.stdout


def test_no_password_reaches_the_clients_logs(
    secured: Secured, caplog: pytest.LogCaptureFixture
) -> None:
    game = secured.settings("game")
    secret = clients.password(game)
    with caplog.at_level(logging.DEBUG):
        admin = KafkaAdminClient(**clients.kafka_python(game))
        admin.close()
    assert "Starting KafkaAdminClient with configuration" in caplog.text
    assert secret not in caplog.text
    assert secret not in repr(game) and secret not in str(clients.kafka_python(game))


def test_the_roles_acls_are_applied_once(secured: Secured) -> None:
    out = io.StringIO()
    assert apply(secured.settings("admin"), secured.base / "clients", out=out) == 0
    assert "nothing changed" in out.getvalue()


def test_a_worker_with_the_game_roles_login_exits_2_and_its_health_says_why(
    secured: Secured, tmp_path: Path
) -> None:
    env = {**secured.env("game"), "CROUPIER_WEB_PORT": "0"}
    log = tmp_path / "worker.log"
    worker = croupier(env, log, "worker", "--loglevel", "warning")
    try:
        code = worker.wait(timeout=90)
    finally:
        stop(worker)
    text = log.read_text()
    assert code == 2, text
    assert "User:game" in text and "refused by the brokers" in text


def test_a_round_published_as_game_is_settled_by_croupier_and_read_by_the_wallet(
    secured: Secured, tmp_path: Path
) -> None:
    settle_as_roles(secured, tmp_path, "T-e2e")


def test_an_api_that_may_not_read_the_outputs_exits_2_saying_who_was_refused(
    secured: Secured, tmp_path: Path
) -> None:
    env = {
        **secured.env("game"),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'readside.sqlite'}",
        "CROUPIER_API_PORT": "0",
        "CROUPIER_API_AUTH": "off",  # the broker's refusal is tested here, not the tokens
    }
    log = tmp_path / "api.log"
    api = croupier(env, log, "api", "--serve-only", "--loglevel", "warning")
    try:
        code = api.wait(timeout=90)
    finally:
        stop(api)
    text = log.read_text()
    assert code == 2, text
    assert "User:game" in text and "the API was refused" in text


def test_a_wallet_shares_its_partitions_in_a_group_named_after_its_role(
    secured: Secured, tmp_path: Path
) -> None:
    """Any standard consumer can join a group `wallet-*` as the wallet role: `croupier wallet
    --group` subscribes, credits from the ledger's positions and commits them to the group."""
    settle_as_roles(secured, tmp_path, "T-group")
    wallet = secured.settings("wallet")
    ledger = Ledger(str(tmp_path / "grouped.sqlite"))
    topics = ["settlements", "refunds", "adjustments"]
    try:
        progress = consume(ledger, wallet, topics, group="wallet-payments")
        balances = {b.player_id: b.balance for b in ledger.balances()}
        positions = ledger.positions(topics)
    finally:
        ledger.close()
    assert progress.new >= 1 and balances["P-T-group"] == 200
    admin = KafkaAdminClient(**clients.kafka_python(wallet))
    try:
        committed = admin.list_group_offsets({"wallet-payments": None})["wallet-payments"]
    finally:
        admin.close()
    advised = {(tp.topic, tp.partition): meta.offset for tp, meta in committed.items()}
    assert advised and all(positions[key] == offset for key, offset in advised.items())


def test_a_wallet_may_not_join_a_group_not_named_after_its_role(
    secured: Secured, tmp_path: Path
) -> None:
    wallet = secured.settings("wallet")
    ledger = Ledger(str(tmp_path / "refused.sqlite"))
    started = time.monotonic()
    try:
        with pytest.raises(KafkaError) as caught:
            consume(ledger, wallet, ["settlements"], group="payments")
    finally:
        ledger.close()
    assert time.monotonic() - started < 30
    assert "GroupAuthorization" in type(caught.value).__name__ or "GROUP_AUTHORIZATION" in str(
        caught.value
    )


def test_the_projector_as_readside_projects_a_settled_round_and_joins_no_group(
    secured: Secured, tmp_path: Path
) -> None:
    # readside has no group ACL: its consumer assigns partitions, and its positions are the
    # database's; a group joined or an offset committed would be refused and stop it.
    settle_as_roles(secured, tmp_path, "T-projected")
    database = f"sqlite:///{tmp_path / 'readside.sqlite'}"
    env = {**secured.env("readside"), "DATABASE_URL": database}
    log = tmp_path / "projector.log"
    projector = croupier(env, log, "projector", "--loglevel", "info")
    engine = connect(database)
    try:
        deadline = time.monotonic() + 90
        found: list[tuple[str, str, int]] = []
        while time.monotonic() < deadline and not found:
            assert projector.poll() is None, log.read_text()
            time.sleep(1)
            with contextlib.suppress(OperationalError), engine.connect() as db:
                found = [
                    (r.bet_id, r.result, r.payout)
                    for r in db.execute(
                        text("SELECT bet_id, result, payout FROM bets WHERE table_id = :t"),
                        {"t": "T-projected"},
                    )
                ]
        assert found == [("T-projected-R1-b1", "win", 200)], log.read_text()
        projector.send_signal(signal.SIGINT)
        assert projector.wait(timeout=30) == 0, log.read_text()
    finally:
        engine.dispose()
        stop(projector)
    said = log.read_text()
    assert "WARNING" not in said and "CRITICAL" not in said, said
