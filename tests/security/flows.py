"""What the roles do together on a secured broker or cluster, shared by their tests."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from services.audit.reader import read_topic
from services.publisher.producer import Publisher
from services.wallet.consumer import consume
from services.wallet.ledger import Ledger
from tests.kafka import ROOT, stop
from tests.security.conftest import Secured
from tests.security.events import round_of


def settle_as_roles(secured: Secured, tmp_path: Path, table: str) -> None:
    """A round published as game is settled by a worker logged in as croupier, and the wallet
    role reads the settlement and credits its payout."""
    game = secured.settings("game")
    with Publisher.from_settings(game) as publisher:
        for event in round_of(table, "R1", stake=100):
            publisher.publish(event)
    env = secured.env("croupier")
    log = tmp_path / "worker.log"
    with open(log, "wb") as out:
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "services.cli",
                "worker",
                "--loglevel",
                "warning",
                "--web-port",
                "0",
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    ledger = Ledger(str(tmp_path / "wallet.sqlite"))
    wallet = secured.settings("wallet")
    try:
        deadline = time.monotonic() + 90
        settled: list[dict[str, object]] = []
        while time.monotonic() < deadline and not any(s["table_id"] == table for s in settled):
            assert worker.poll() is None, log.read_text()
            time.sleep(1)
            settled = [json.loads(m.value) for m in read_topic(wallet, "settlements", timeout=30)]
        mine = [s for s in settled if s["table_id"] == table]
        assert [(s["bet_id"], s["result"], s["payout"]) for s in mine] == [
            (f"{table}-R1-b1", "win", 200)
        ]
        progress = consume(ledger, wallet, ["settlements", "refunds", "adjustments"])
        assert progress.new >= 1
        balances = {b.player_id: b.balance for b in ledger.balances()}
        assert balances[f"P-{table}"] == 200
    finally:
        ledger.close()
        stop(worker)
    assert "refused" not in log.read_text()
