"""`croupier simulate`: the simulated floor to Kafka (paced in wall time) or to JSON Lines."""

from __future__ import annotations

import argparse
import secrets
import signal
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import BinaryIO, TextIO

import msgspec

from schemas.keys import TableKeysFile
from services.publisher.producer import Publisher, PublishError
from services.security.denied import reraise
from services.settings import Settings
from services.simulation.simulator import ROUND_SECONDS, Config, Emission, Scope, Simulation


class Stop:
    """Set by SIGINT/SIGTERM: the simulation stops between two events and flushes."""

    def __init__(self) -> None:
        self.event = threading.Event()

    def install(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: self.event.set())


def parse_start(text: str) -> datetime:
    """An RFC 3339 instant with a zone, e.g. 2026-01-01T12:00:00Z."""
    instant = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    if instant.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone; add Z or +HH:MM")
    return instant


def _summary(sim: Simulation) -> str:
    c = sim.counts
    return (
        f"{c['rounds']} rounds, {c['round_events']} round events, {c['bets']} bets"
        f" | suspended {c['suspended']}, reshaken {c['reshaken']}, cancelled {c['cancelled']},"
        f" late bets {c['late_bets']}, disconnects {c['disconnects']}, retries {c['retries']}"
    )


def to_file(sim: Simulation, out: BinaryIO, err: TextIO, stop: Stop, every: float = 5.0) -> int:
    """Every emission as one JSON line, as fast as it can, retries included (same bytes)."""
    shown = time.monotonic()
    written = 0
    for emission in sim:
        out.write(emission.message.value + b"\n")
        written += 1
        if stop.event.is_set():
            break
        if time.monotonic() - shown >= every:
            shown = time.monotonic()
            print(f"simulate: {written} lines written; {_summary(sim)}", file=err, flush=True)
    out.flush()
    print(f"simulate: {written} lines written; {_summary(sim)}", file=err, flush=True)
    return 0


def to_kafka(
    sim: Simulation,
    publisher: Publisher,
    err: TextIO,
    stop: Stop,
    *,
    speed: float,
    every: float = 10.0,
) -> int:
    """Publish each emission when its time comes: `speed` rounds a minute a table (0: at once)."""
    scale = ROUND_SECONDS * speed / 60.0
    began = shown = time.monotonic()
    sent = 0
    try:
        for emission in _paced(sim, scale, began, stop):
            publisher.publish(emission.message.value)
            sent += 1
            if time.monotonic() - shown >= every:
                shown = time.monotonic()
                publisher.flush()
                print(f"simulate: {sent} events sent; {_summary(sim)}", file=err, flush=True)
        publisher.close()
    except PublishError as error:
        print(f"simulate: {error}", file=err, flush=True)
        return 1
    print(f"simulate: stopped; {sent} events sent; {_summary(sim)}", file=err, flush=True)
    return 0


def _paced(sim: Simulation, scale: float, began: float, stop: Stop) -> Iterable[Emission]:
    for emission in sim:
        if scale > 0:
            due = began + emission.offset / scale
            delay = due - time.monotonic()
            if delay > 0 and stop.event.wait(delay):
                return
        if stop.event.is_set():
            return
        yield emission


def main(
    sim: Simulation,
    *,
    settings: Settings,
    out: str | None,
    dry_run: bool,
    speed: float,
    err: TextIO = sys.stderr,
) -> int:
    """Run the simulation into a file, standard output, or Kafka."""
    stop = Stop()
    stop.install()
    c = sim.config
    print(
        f"simulate: seed {c.seed}, {c.tables} tables, {c.players} players, "
        f"{c.rounds or 'unlimited'} rounds per table, start {c.start.isoformat()}",
        file=err,
        flush=True,
    )
    if dry_run or out == "-":
        try:
            return to_file(sim, sys.stdout.buffer, err, stop)
        except BrokenPipeError:
            return 0
    if out is not None:
        with open(out, "wb") as stream:
            return to_file(sim, stream, err, stop)
    try:
        publisher = Publisher.from_settings(settings)
    except Exception as error:
        reraise(error, settings, doing="publish", resource="topics", operation="Write")
        print(
            f"simulate: cannot reach Kafka at {settings.kafka_bootstrap} ({error}); start it with "
            "`make kafka-up` or set KAFKA_BOOTSTRAP, or write a file with --out FILE",
            file=err,
        )
        return 1
    print(
        f"simulate: publishing to {settings.topic_rounds} and {settings.topic_bets} at "
        f"{settings.kafka_bootstrap}, {speed or 'unpaced'} rounds per minute per table",
        file=err,
        flush=True,
    )
    return to_kafka(sim, publisher, err, stop, speed=speed)


def write_keys(path: Path, config: Config) -> None:
    """The table keys file of the simulated tables (replaced whole)."""
    from services.signing.keys import public_text
    from services.simulation.simulator import table_ids, table_key

    tables = {
        table_id: [public_text(table_key(config.seed, table_id).public_key())]
        for table_id, _ in table_ids(config.tables)
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        msgspec.json.format(msgspec.json.encode(TableKeysFile(tables=tables)), indent=2) + b"\n"
    )


def loaded(given: list[str], config: Config) -> frozenset[tuple[Scope, str]]:
    """The `--loaded SCOPE:ID` options, each naming a table, dealer or shaker of the floor."""
    staff = config.staff()
    found: set[tuple[Scope, str]] = set()
    for text in given:
        scope, _, name = text.partition(":")
        if scope not in staff:
            raise ValueError(f"{text!r}: expected table:ID, dealer:ID or shaker:ID")
        if name not in staff[scope]:
            known = ", ".join(staff[scope][:4])
            raise ValueError(f"{text!r}: no such {scope} on this floor (they are {known}, ...)")
        found.add((scope, name))
    return frozenset(found)


def command(args: argparse.Namespace) -> int:
    """`croupier simulate` from its command-line options."""
    from services.simulation.simulator import EPOCH

    if args.tables < 1 or args.players < 0 or args.rounds < 0 or args.speed < 0:
        print(
            "simulate: --tables >= 1, --players >= 0, --rounds >= 0, --speed >= 0", file=sys.stderr
        )
        return 2
    try:
        start = parse_start(args.start) if args.start else EPOCH
    except ValueError as error:
        print(f"simulate: --start: {error}", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    config = Config(
        tables=args.tables,
        players=args.players,
        rounds=args.rounds,
        seed=seed,
        start=start,
        signed=args.sign is not None,
    )
    try:
        config = replace(config, loaded=loaded(args.loaded, config))
    except ValueError as error:
        print(f"simulate: --loaded: {error}", file=sys.stderr)
        return 2
    if args.sign is not None:
        write_keys(Path(args.sign), config)
        print(
            f"simulate: every table signs; their public keys are in {args.sign} "
            f"(CROUPIER_TABLE_KEYS_FILE={args.sign} for the workers)",
            file=sys.stderr,
        )
    return main(
        Simulation(config),
        settings=Settings(),
        out=args.out,
        dry_run=args.dry_run,
        speed=args.speed,
    )
