"""Test support for the read side: a `croupier api` process, HTTP calls, and the offline answers."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import msgspec

from schemas.codec import encode
from schemas.records import Adjustment, Refund, Rejected, Settlement
from services.ports import free_port
from services.settings import Settings
from services.settlement.fold import Fold
from services.settlement.rounds import Resulted
from services.simulation.streams import Streams
from tests.kafka import OUTPUT, ROOT, environment
from tests.tokens import ED, RSA, bearer, token, write_jwks


def get(url: str) -> tuple[int, Any]:
    """GET a JSON answer: its status and decoded body (errors included), asked with a token
    granting every scope (the read side checks it on histories, recalls and the report)."""
    request = urllib.request.Request(url, headers=bearer(token(expires_in=3600)))
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def quote(value: str) -> str:
    return urllib.parse.quote(value, safe="")


@contextmanager
def read_side(
    settings: Settings,
    name: str = "api",
    *,
    kill: bool = False,
    database: str | None = None,
    serve_only: bool = False,
) -> Iterator[str]:
    """A `croupier api` process on a free port; yields its base URL, stops it at the end. It
    checks tokens against the JWKS of tests/tokens.py's ED and RSA keys (`get` sends one).

    `database` is its DATABASE_URL (default: a new SQLite file under test-output/). With `kill`
    it ends with SIGKILL, as a crash would: nothing is flushed or saved.
    """
    OUTPUT.mkdir(exist_ok=True)
    port = free_port()
    env = environment(settings)
    env["CROUPIER_API_PORT"] = str(port)
    env["CROUPIER_API_POLL_MS"] = "300"
    env["DATABASE_URL"] = database or f"sqlite:///{OUTPUT / f'{settings.group_id}.sqlite'}"
    env["CROUPIER_API_JWKS_FILE"] = str(
        write_jwks(OUTPUT / f"{settings.group_id}-jwks.json", ED, RSA)
    )
    serve = ["--serve-only"] if serve_only else []
    with open(OUTPUT / f"{settings.group_id}-{name}.log", "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "services.cli", "api", "--loglevel", "warning", *serve],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_read_up(url: str, timeout: float = 120.0) -> dict[str, Any]:
    """Until the read side has folded every committed message of its topics."""
    deadline = time.monotonic() + timeout
    health: dict[str, Any] = {}
    while time.monotonic() < deadline:
        try:
            status, health = get(f"{url}/health")
            if status == 200 and health["caught_up"]:
                return health
        except (OSError, ValueError):
            pass
        time.sleep(0.3)
    raise TimeoutError(f"read side at {url} not caught up after {timeout:.0f} s: {health}")


@dataclass
class Offline:
    """What the offline fold (`croupier replay --stats`) says for the same events."""

    decisions: dict[str, dict[str, Any]] = field(default_factory=dict)
    stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    timelines: dict[tuple[str, str], list[tuple[str, str]]] = field(default_factory=dict)
    outcomes: dict[tuple[str, str], tuple[str, Any, Any]] = field(default_factory=dict)
    adjustments: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def players(self) -> set[str]:
        return {d["player_id"] for d in self.decisions.values()}


def offline(streams: Streams) -> Offline:
    """Replay the streams through the fold, rounds first, and note what each endpoint should say."""
    fold, seen, out = Fold(), set(), Offline()
    for kind, raw in streams.tagged():
        records = fold.feed(kind, raw)
        for record in records:
            if isinstance(record, Settlement | Refund):
                out.decisions[record.bet_id] = msgspec.json.decode(encode(record))
            elif isinstance(record, Adjustment):
                decoded = msgspec.json.decode(encode(record))
                out.adjustments.setdefault(record.bet_id, []).append(decoded)
        if kind != "rounds" or any(isinstance(r, Rejected) for r in records):
            continue
        try:
            event = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            continue
        key = (event["table_id"], event["round_id"])
        if (key, event["event_id"]) not in seen:
            seen.add((key, event["event_id"]))
            out.timelines.setdefault(key, []).append((event["type"], event["event_id"]))
    for table_id, table in fold.tables.items():
        stats = fold.stats(table_id)
        if stats is not None:
            out.stats[table_id] = msgspec.json.decode(encode(stats))
        for round_id, rnd in table.rounds.items():
            life, dice, discs = rnd.life, None, None
            if isinstance(life, Resulted):  # corrected: the current outcome
                dice = list(life.outcome) if life.result.dice else None
                discs = list(life.outcome) if life.result.discs else None
            out.outcomes[(table_id, round_id)] = (rnd.phase, dice, discs)
    return out
