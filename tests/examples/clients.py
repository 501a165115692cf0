"""The example clients of examples/ as the tests run them: built once, each a process."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from schemas.codec import encode
from services.audit.reader import read_topic
from services.settings import Settings
from services.settlement.fold import Fold
from services.signing.keys import add_public_key, load, private_file
from tests.kafka import OUTPUT, ROOT

EXAMPLES = ROOT / "examples"
BIN = OUTPUT / "examples"
MONEY_TOPICS = ("settlements", "refunds", "adjustments")


@dataclass(frozen=True)
class Binaries:
    go_publisher: Path
    go_wallet: Path
    java_publisher: Path


def build() -> Binaries:
    """go build both Go examples, mvn package the Java one (offline from ~/.m2 when it can)."""
    BIN.mkdir(parents=True, exist_ok=True)
    for name in ("go-publisher", "go-wallet"):
        _run(["go", "build", "-o", str(BIN / name), f"./{name}"], EXAMPLES)
    java = EXAMPLES / "java-publisher"
    maven = ["mvn", "-B", "-q", "-Dstyle.color=never", "package"]
    if subprocess.run([*maven, "-o"], cwd=java, capture_output=True).returncode != 0:
        _run(maven, java)
    return Binaries(
        go_publisher=BIN / "go-publisher",
        go_wallet=BIN / "go-wallet",
        java_publisher=java / "target" / "java-publisher.jar",
    )


def _run(command: list[str], cwd: Path) -> None:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{' '.join(command)} in {cwd}:\n{done.stdout}\n{done.stderr}"


def signing_keys(folder: Path, *tables: str) -> tuple[Path, dict[str, Path]]:
    """A new key per table: the table keys file the workers read, and each private key file."""
    keys = folder / "table-keys.json"
    private: dict[str, Path] = {}
    for table in tables:
        key = Ed25519PrivateKey.generate()
        private[table] = folder / f"{table}.key.json"
        private[table].write_bytes(private_file(table, key))
        add_public_key(keys, table, key.public_key())
    return keys, private


def connection_flags(settings: Settings) -> list[str]:
    """The examples' broker flags for these settings (plain, or SCRAM-SHA-512 over TLS)."""
    flags = ["-bootstrap", settings.kafka_bootstrap]
    if settings.kafka_ca_file:
        flags += ["-ca-file", settings.kafka_ca_file]
    if settings.kafka_username:
        assert settings.kafka_password_file is not None
        flags += ["-user", settings.kafka_username, "-password-file", settings.kafka_password_file]
    return flags


def publish(command: list[str], settings: Settings, table: str, key: Path, sent: Path) -> None:
    """Run a publisher for one table to the settings' input topics; it writes what it sent."""
    done = subprocess.run(
        [
            *command,
            *connection_flags(settings),
            "-rounds-topic",
            settings.topic_rounds,
            "-bets-topic",
            settings.topic_bets,
            "-table",
            table,
            "-key",
            str(key),
            "-rounds",
            "30",
            "-bets",
            "6",
            "-sent",
            str(sent),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, f"{command[0]} for {table}:\n{done.stdout}\n{done.stderr}"
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["table_id"] == table
    assert summary["events"] == len(sent.read_text().splitlines())


def replay(keys: Path, *sent: Path) -> Counter[bytes]:
    """The records `croupier replay --keys` computes from exactly what the publishers sent."""
    fold = Fold(keys=load(keys))
    records: Counter[bytes] = Counter()
    for path in sent:
        for line in path.read_bytes().splitlines():
            topic = "rounds" if json.loads(line)["type"].startswith("round.") else "bets"
            records.update(encode(r) for r in fold.feed(topic, line))
    return records


def committed(settings: Settings, topics: Iterable[str]) -> Counter[bytes]:
    """Every committed record of these topics."""
    records: Counter[bytes] = Counter()
    for topic in topics:
        records.update(m.value for m in read_topic(settings, topic))
    return records


def movement(raw: bytes) -> tuple[str, str, str, int] | None:
    """A wallet's movement of a record: (id, player, currency, amount), None for a rejection."""
    record = json.loads(raw)
    match record["type"]:
        case "settlement":
            return (
                record["settlement_id"],
                record["player_id"],
                record["currency"],
                record["payout"],
            )
        case "refund":
            return record["refund_id"], record["player_id"], record["currency"], record["amount"]
        case "adjustment":
            return record["adjustment_id"], record["player_id"], record["currency"], record["delta"]
    return None


def balances(records: Iterable[bytes]) -> dict[str, dict[str, int]]:
    """Each player's balance per currency, every record counted once by its id."""
    seen: set[str] = set()
    out: dict[str, dict[str, int]] = {}
    for raw in records:
        found = movement(raw)
        if found is None or found[0] in seen:
            continue
        seen.add(found[0])
        _, player, currency, amount = found
        out.setdefault(player, {}).setdefault(currency, 0)
        out[player][currency] += amount
    return out


class Wallet:
    """The Go wallet: a process in a consumer group over one credit store; as a context, every
    process it started is ended on the way out (a failed test leaves none running)."""

    def __init__(
        self, binary: Path, settings: Settings, topics: list[str], group: str, store: Path
    ):
        self.command = [
            str(binary),
            *connection_flags(settings),
            "-group",
            group,
            "-topics",
            ",".join(topics),
            "-store",
            str(store),
            "-instance",
            "wallet-1",
        ]
        self.log = store.with_suffix(".log")
        self.started: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> Wallet:
        return self

    def __exit__(self, *_: object) -> None:
        for process in self.started:
            if process.poll() is None:
                process.kill()
                process.wait()

    def start(self, *extra: str) -> subprocess.Popen[bytes]:
        with open(self.log, "ab") as log:
            process = subprocess.Popen(
                [*self.command, *extra], stdout=log, stderr=subprocess.STDOUT
            )
        self.started.append(process)
        return process

    def balances(self) -> dict[str, object]:
        """What the store holds: {"credited": n, "balances": {player: {currency: amount}}}."""
        done = subprocess.run(
            [*self.command, "-balances"], capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 0, done.stderr
        found: dict[str, object] = json.loads(done.stdout)
        return found

    def credited(self) -> int:
        n = self.balances()["credited"]
        assert isinstance(n, int)
        return n

    def wait_credited(self, process: subprocess.Popen[bytes], at_least: int) -> int:
        """Until the store holds at least this many credits (the process must stay up)."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            n = self.credited()
            if n >= at_least:
                return n
            assert process.poll() is None, self.log.read_text()
            time.sleep(0.05)
        raise TimeoutError(f"the wallet credited {self.credited()} of {at_least} in 120 s")

    def stop(self, process: subprocess.Popen[bytes]) -> None:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0, self.log.read_text()


def store_ids(store: Path) -> Counter[str]:
    """How many times the store holds each id (its last line may be cut short by a kill)."""
    ids: Counter[str] = Counter()
    for line in store.read_bytes().splitlines(keepends=True):
        if line.endswith(b"\n"):
            ids.update(c["id"] for c in json.loads(line)["credits"] or [])
    return ids
