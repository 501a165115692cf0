"""`make bench-readside`: the read side on PostgreSQL under a long history.

1. Preload `CROUPIER_BENCH_READSIDE_BETS` bets (default 10,000,000; 200 a round, one round of
   10,000, 1,000 players of 10,000 bets each), settle them with croupier's workers and measure
   settled bets per second (first commit to lag 0, as `make bench-kafka`).
2. Then `CROUPIER_BENCH_PROJECTORS` `croupier projector` processes (default 2, sharing the
   partitions) on a fresh PostgreSQL database project all of it: bets (rows of `bets`) per second
   from the first batch to caught up, and the resident memory at every million; then one
   projector alone over the same topics into another database, the same figures.
3. Restart to caught up: the projector stopped and started again on the full database, and the
   same on an empty database over empty topics (process start included).
4. p50/p99 over HTTP (`croupier api --serve-only`, one kept-alive connection) of the first page
   of a player's history (10,000 bets), of a page deep in it (by cursor), of the recall of the
   10,000-bet round and of the whole report: right after the projection, while the server is
   still vacuuming and writing out what it loaded (how often an autovacuum worker ran during the
   queries, and the checkpoints, are printed beside them), and again once it has settled
   (`VACUUM (ANALYZE)` and a `CHECKPOINT` run by the benchmark). Beside each: its three slowest
   requests (#0 the first), and the blocks its group read from outside the server's buffers,
   timed when the role may turn `track_io_timing` on (the cold reads of a deep page, told from
   the rest of its time).

Each measured run (the pipeline, each projection) starts on a quiet machine (`quiesce`): what the
step before wrote flushed to disk, and no autovacuum worker of its database left running.

With `CROUPIER_BENCH_READSIDE_BASE=<git ref>` (or `--base <git ref>`), steps 2 to 4 run for the
code at that ref (old, a worktree in .data/ab, as `make bench-ab`) and for this work tree (new),
taking turns over the same settled outputs (tests/bench/readside_ab.py).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiokafka import AIOKafkaProducer  # type: ignore[import-untyped]
from kafka import KafkaConsumer, TopicPartition  # type: ignore[import-untyped]
from sqlalchemy import Engine, func, select, text
from sqlalchemy.exc import DBAPIError

from services.history import schema
from services.history.migrate import upgrade
from services.history.store import connect
from services.partitioner import partition_of
from services.ports import free_port
from services.settings import Settings
from tests.bench.meters import cpu_seconds, rss_bytes
from tests.bench.pipeline import SAYS_WHERE, imported_from, rate, start, stop
from tests.bench.readside_figures import readside_figures
from tests.bench.results import Run
from tests.database import fresh_url
from tests.kafka import create_topics, delete_topics, environment, isolated_settings
from tests.tokens import ED, bearer, token, write_jwks

if TYPE_CHECKING:
    from tests.bench.ab import Side

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "test-output" / "bench-readside"
BOOTSTRAP = os.environ.get("KAFKA_BOOTSTRAP", "127.0.0.1:9092")
BETS = int(os.environ.get("CROUPIER_BENCH_READSIDE_BETS", "10000000"))
PARTITIONS = int(os.environ.get("CROUPIER_BENCH_PARTITIONS", "4"))
WORKERS = int(os.environ.get("CROUPIER_BENCH_WORKERS", "1"))
PROJECTORS = int(os.environ.get("CROUPIER_BENCH_PROJECTORS", "2"))
"""Projector processes sharing the partitions (CROUPIER_API_PROJECTOR_SHARDS); one alone is
measured beside them over the same topics."""
PER_ROUND = 200
BIG_ROUND = 10_000
PLAYERS = max(1, BETS // 10_000)
TABLES = 16
QUERIES = 300


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def croupier(
    args: list[str], name: str, env: dict[str, str], side: Side | None = None
) -> tuple[subprocess.Popen[bytes], Path]:
    """A `croupier` command of this repository, or of a side's checkout (its log then says where
    its `services` came from: `checked`); the process and its log."""
    if side is None:
        return start(["-m", "services.cli", *args], name, LOGS, env), LOGS / f"{name}.log"
    name = f"{side.name}-{name}"
    env = env | {"PYTHONPATH": str(side.code), "PYTHONUNBUFFERED": "1"}
    return start(["-c", SAYS_WHERE, *args], name, LOGS, env, cwd=side.code), LOGS / f"{name}.log"


def checked(side: Side | None, logs: list[Path]) -> None:
    """Fail the run when a process of a side imported another checkout's `services`."""
    if side is not None:
        for log in logs:
            side.check_import(imported_from(log))


MIGRATE = (
    "import sys\n"
    "from services.history.migrate import upgrade\n"
    "from services.history.store import connect\n"
    "engine = connect(sys.argv[1])\n"
    "upgrade(engine)\n"
    "engine.dispose()\n"
)
"""The schema of the code on PYTHONPATH, made in a database (its URL the first argument)."""


def migrate(database: str, side: Side | None) -> None:
    """The database at the newest schema of this code, or of a side's (each code its own
    migrations: the new code's would leave a database the old code does not know)."""
    if side is None:
        engine = connect(database)
        upgrade(engine)
        engine.dispose()
        return
    env = dict(os.environ) | {"PYTHONPATH": str(side.code)}
    done = subprocess.run(
        [sys.executable, "-c", MIGRATE, database],
        cwd=side.code,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the {side.name} code's migrations failed: {done.stderr[-2000:]}")


def _head(table: str, round_id: str, at: str) -> str:
    return f'"v":1,"table_id":"{table}","round_id":"{round_id}","at":"{at}"'


def rounds(s: Settings) -> Iterator[tuple[str, bytes, bytes]]:
    """Every message to publish, in order: (topic, key, value)."""
    bets = n = 0
    while bets < BETS:
        table = f"T{n % TABLES:03d}"
        size = BIG_ROUND if n == 7 else min(PER_ROUND, BETS - bets)
        round_id = f"{table}-R{n:08d}"
        minute, second = divmod(n, 60)
        at = f"2026-11-{1 + (n // 86400) % 28:02d}T{(minute // 60) % 24:02d}:{minute % 60:02d}:{second:02d}Z"
        head = _head(table, round_id, at)
        key = table.encode()
        yield (
            s.topic_rounds,
            key,
            f'{{"type":"round.opened","event_id":"{round_id}-o",{head},"game":"sicbo"}}'.encode(),
        )
        for seq in range(1, size + 1):
            b = bets + seq
            yield (
                s.topic_bets,
                key,
                (
                    f'{{"type":"bet.placed","event_id":"{round_id}-{seq}",{head},'
                    f'"bet_id":"{round_id}-{seq}","player_id":"P{b % PLAYERS:05d}","seq":{seq},'
                    f'"kind":"{("big", "small", "odd", "even")[b % 4]}","stake":{100 + b % 7},'
                    '"currency":"EUR"}'
                ).encode(),
            )
        yield (
            s.topic_rounds,
            key,
            f'{{"type":"round.betting_closed","event_id":"{round_id}-c",{head},"last_seq":{size}}}'.encode(),
        )
        dice = [1 + n % 6, 1 + (n // 6) % 6, 1 + (n // 36) % 6]
        yield (
            s.topic_rounds,
            key,
            f'{{"type":"round.result","event_id":"{round_id}-r",{head},"dice":{dice}}}'.encode(),
        )
        bets += size
        n += 1


def preload(s: Settings) -> tuple[int, int, str]:
    """Publish the rounds; (bets, round events, the table of the big round) published."""
    return asyncio.run(_publish(s))


async def _publish(s: Settings) -> tuple[int, int, str]:
    """Records straight into producer batches of 1 MiB (a send per record would take most of
    the benchmark's time), to the partition of their key (Kafka's default partitioner), a
    bounded number of batches in flight; idempotent, so nothing is doubled or reordered."""
    producer = AIOKafkaProducer(
        bootstrap_servers=BOOTSTRAP, acks="all", enable_idempotence=True, max_batch_size=1 << 20
    )
    await producer.start()
    bets = events = 0
    started = time.monotonic()
    batches: dict[tuple[str, int], Any] = {}
    sending: list[asyncio.Future[Any]] = []

    async def send(topic: str, p: int, batch: Any) -> None:
        sending.append(await producer.send_batch(batch, topic, partition=p))
        if len(sending) >= 32:
            await asyncio.gather(*sending)
            sending.clear()

    try:
        for topic, key, value in rounds(s):
            p = partition_of(key, PARTITIONS)
            batch = batches.get((topic, p))
            if batch is None:
                batch = batches[(topic, p)] = producer.create_batch()
            if batch.append(key=key, value=value, timestamp=None) is None:
                await send(topic, p, batch)
                batch = batches[(topic, p)] = producer.create_batch()
                batch.append(key=key, value=value, timestamp=None)
            if topic == s.topic_bets:
                bets += 1
                if bets % 400_000 == 0:
                    say(f"  published {bets:,} bets ({bets / (time.monotonic() - started):,.0f}/s)")
            else:
                events += 1
        for (topic, p), batch in batches.items():
            if batch.record_count():
                await send(topic, p, batch)
        await asyncio.gather(*sending)
    finally:
        await producer.stop()
    return bets, events, f"T{7 % TABLES:03d}-R{7:08d}"


def _processes(where: str) -> Iterator[tuple[int, bytes]]:
    """Every process on the machine, by pid, with what its /proc file `where` holds (one gone
    meanwhile is passed over)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                yield int(entry.name), (entry / where).read_bytes()
            except OSError:
                continue


def _by_pid(command: str) -> dict[int, float]:
    """CPU seconds of every process of this name on the machine, by pid."""
    found: dict[int, float] = {}
    for pid, comm in _processes("comm"):
        if comm.decode().strip() == command:
            try:
                found[pid] = cpu_seconds(pid)
            except OSError:
                continue  # gone meanwhile
    return found


class Meter:
    """CPU seconds used since it was made by the processes of one name (a local server's
    backends, its autovacuum workers): each process from where it was first seen (0 for one
    started since), up to its last sample, so that one which exits is not taken off. Sample
    often: a process that comes and goes between two samples is missed."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.start = _by_pid(command)
        self.last = dict(self.start)

    def sample(self) -> None:
        self.last.update(_by_pid(self.command))

    def used(self) -> float:
        self.sample()
        return sum(seconds - self.start.get(pid, 0.0) for pid, seconds in self.last.items())


class Metered:
    """The processor time, from `begin` on, of some processes of the benchmark's own and of the
    local servers of some names (`Meter`): what the measured work costs the machine, whatever its
    speed at the time."""

    def __init__(self, procs: list[Any], servers: tuple[str, ...]) -> None:
        self.procs = procs
        self.names = servers
        self.start = 0.0
        self.servers: tuple[Meter, ...] = ()

    def _own(self) -> float:
        return sum(cpu_seconds(proc.pid) for proc in self.procs)

    def begin(self) -> None:
        self.start = self._own()
        self.servers = tuple(Meter(name) for name in self.names)

    def sample(self) -> None:
        for meter in self.servers:
            meter.sample()

    def per_bet(self, bets: int) -> list[float]:
        """µs a bet of the processes, then of each server, since `begin`."""
        used = (self._own() - self.start, *(meter.used() for meter in self.servers))
        return [seconds / bets * 1e6 for seconds in used]


class Progress:
    """Where the projector is: bets projected, and whether every partition is at its end."""

    def __init__(self, s: Settings, database: str, side: Side | None = None) -> None:
        migrate(database, side)
        self.engine = connect(database)
        topics = [s.topic_accepted, s.topic_table_stats, s.topic_rejected]
        self.consumer = KafkaConsumer(bootstrap_servers=BOOTSTRAP, isolation_level="read_committed")
        self.parts = [TopicPartition(t, p) for t in topics for p in range(PARTITIONS)]

    def bets(self) -> int:
        c = schema.counters
        with self.engine.connect() as db:
            found = db.execute(
                select(func.coalesce(func.sum(c.c.value), 0)).where(
                    c.c.name == "croupier_read_decisions_total",
                    c.c.labels.not_like('%kind="adjustment"%'),  # bets decided, not re-decided
                )
            ).scalar_one()
        return int(found)

    def caught_up(self) -> bool:
        ends = self.consumer.end_offsets(self.parts)
        p = schema.positions
        with self.engine.connect() as db:
            stored = {(r.topic, r.partition): r.next_offset for r in db.execute(select(p))}
        return all(stored.get((tp.topic, tp.partition)) == ends[tp] for tp in self.parts)

    def close(self) -> None:
        self.consumer.close()
        self.engine.dispose()


def project(
    s: Settings, database: str, total: int, shards: int = 1, side: Side | None = None
) -> dict[str, Any]:
    """Run `shards` projector processes (sharing the partitions) over everything; bets/s, the
    processor time a bet, and RSS at every million (the largest of the processes)."""
    env = environment(s) | {
        "DATABASE_URL": database,
        "CROUPIER_API_PROJECTOR_SHARDS": str(shards),
    }
    progress = Progress(s, database, side)
    started = [
        croupier(
            ["projector", "--loglevel", "info"],
            f"projector-{n}" if shards > 1 else "projector",
            env | {"CROUPIER_API_PROJECTOR_SHARD": str(n)},
            side,
        )
        for n in range(shards)
    ]
    procs = [proc for proc, _ in started]
    rss: dict[int, float] = {}
    first: tuple[float, int] | None = None
    metered = Metered(procs, ("postgres", "java"))

    def largest() -> float:
        return max(rss_bytes(proc.pid) for proc in procs) / (1024 * 1024)

    try:
        while True:
            if any(proc.poll() is not None for proc in procs):
                raise RuntimeError("a projector exited; see test-output/bench-readside/")
            done = progress.bets()
            now = time.monotonic()
            if first is None and done > 0:
                first = (now, done)
                metered.begin()
            metered.sample()
            million = done // 1_000_000
            if million and million not in rss:
                rss[million] = largest()
                say(f"  projected {done:,} bets, RSS {rss[million]:.0f} MiB")
            if done >= total and progress.caught_up():
                break
            time.sleep(0.5)
        assert first is not None
        elapsed = time.monotonic() - first[0]
        return {
            "cpu_us": metered.per_bet(done - first[1]),
            "bets_per_s": (done - first[1]) / elapsed,
            "rss": rss,
            "rss_end": largest(),
            "seconds": elapsed,
        }
    finally:
        stop(procs)
        progress.close()
        checked(side, [log for _, log in started])


def restart(s: Settings, database: str, side: Side | None = None) -> tuple[float, str]:
    """Seconds from starting a projector to caught up (nothing new to read), and the times of
    its steps as it logged them."""
    env = environment(s) | {"DATABASE_URL": database}
    progress = Progress(s, database, side)
    began = time.monotonic()
    proc, log = croupier(["projector", "--loglevel", "info"], "projector-again", env, side)
    try:
        # ready: it has resumed from the stored positions and follows the topics
        while "projecting" not in log.read_text() or not progress.caught_up():
            if proc.poll() is not None:
                raise RuntimeError("the projector exited; see test-output/bench-readside/")
            time.sleep(0.02)
        took = time.monotonic() - began
        text = log.read_text()
        steps = re.findall(r"(?:schema|found|resumed) in ([0-9.]+ s)", text)
        return took, "database/topics/resume " + "/".join(steps)
    finally:
        stop([proc])
        progress.close()
        checked(side, [log])


def percentiles(times: list[float]) -> str:
    """p50 and p99, and the three slowest with their places in the run (#0 the first)."""
    ordered = sorted(times)
    p50 = statistics.median(ordered) * 1000
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000
    slowest = sorted(range(len(times)), key=times.__getitem__)[-3:][::-1]
    worst = ", ".join(f"#{n} {times[n] * 1000:.1f}" for n in slowest)
    return f"p50 {p50:.1f} ms, p99 {p99:.1f} ms (slowest: {worst})"


AUTHORIZATION = bearer(token(ED, expires_in=86400))
"""Every request carries a token, as a client's would: its check is part of the latency."""


def timed(conn: http.client.HTTPConnection, path: str) -> tuple[float, Any]:
    began = time.perf_counter()
    conn.request("GET", path, headers=AUTHORIZATION)
    response = conn.getresponse()
    body = response.read()
    took = time.perf_counter() - began
    assert response.status == 200, (path, response.status, body[:200])
    return took, json.loads(body)


class Activity:
    """What the database server did in the background while the queries ran: how many of the
    samples (every 50 ms) saw an autovacuum worker, and how many checkpoints began."""

    _NOW = text(
        "SELECT (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'),"
        " (SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter)"
    )

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.samples = self.vacuuming = 0
        self.done = threading.Event()
        self.checkpoints = (0, 0)
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> Activity:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.done.set()
        self.thread.join()

    def _watch(self) -> None:
        with self.engine.connect() as db:
            first = last = 0
            while True:
                workers, last = db.execute(self._NOW).one()
                db.rollback()  # each sample sees the server now, not a snapshot
                first = first or last
                self.samples += 1
                self.vacuuming += workers > 0
                if self.done.wait(0.05):
                    break
            self.checkpoints = (first, last)

    def __str__(self) -> str:
        share = self.vacuuming / max(1, self.samples)
        began = self.checkpoints[1] - self.checkpoints[0]
        return f"autovacuum running in {share:.0%} of {self.samples} samples, {began} checkpoint(s)"


def settle(database: str) -> float:
    """VACUUM (ANALYZE) the database and CHECKPOINT, as an operator would after a bulk load;
    the seconds it took."""
    began = time.monotonic()
    engine = connect(database)
    try:
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as db:
            db.execute(text("VACUUM (ANALYZE)"))
            db.execute(text("CHECKPOINT"))
    finally:
        engine.dispose()
    return time.monotonic() - began


def queries(
    s: Settings, database: str, big_round: str, side: Side | None = None
) -> tuple[dict[str, str], dict[str, list[float]]]:
    """The queries' figures as printed, and each group's times. For a side's API, a group whose
    request fails is printed as failed and left out of the times (the others still run)."""
    LOGS.mkdir(parents=True, exist_ok=True)
    jwks = write_jwks(LOGS / "jwks.json", ED)
    env = environment(s) | {
        "DATABASE_URL": database,
        "CROUPIER_API_PORT": str(free_port()),
        "CROUPIER_API_JWKS_FILE": str(jwks),
    }
    port = int(env["CROUPIER_API_PORT"])
    engine = connect(database)
    blocks = Blocks(engine)  # before the API's sessions begin, which time their reads then
    proc, log = croupier(["api", "--serve-only", "--loglevel", "warning"], "api", env, side)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                timed(conn, "/health")
                break
            except (OSError, AssertionError):
                assert time.monotonic() < deadline, "the API did not answer"
                time.sleep(0.2)
        times: dict[str, list[float]] = {}
        with Activity(engine) as activity:
            answers = _answers(conn, big_round, blocks, times, lenient=side is not None)
        return answers | {"the server meanwhile": str(activity)}, times
    finally:
        stop([proc])
        engine.dispose()
        checked(side, [log])


class Blocks:
    """Blocks the database's sessions read from outside PostgreSQL's shared buffers (the page
    cache or the disk), and the time they took when the server tracks it (`track_io_timing`,
    turned on for this database when the role may), read between groups of queries: a group's
    cold reads, beside its slowest requests."""

    _NOW = text(
        "SELECT blks_read, blk_read_time FROM pg_stat_database WHERE datname = current_database()"
    )

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.timed = False
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as db:
            try:
                name = db.execute(text("SELECT current_database()")).scalar_one()
                db.execute(text(f'ALTER DATABASE "{name}" SET track_io_timing = on'))
                self.timed = True
            except DBAPIError:  # not a superuser of that server: blocks counted, not timed
                pass
        self.mark()

    def mark(self) -> None:
        """Count from now on."""
        self.last = self.now()

    def now(self) -> tuple[int, float]:
        time.sleep(1.5)  # a session's figures reach the server's within a second of idling
        with self.engine.connect() as db:
            read, took = db.execute(self._NOW).one()
        return int(read), float(took)

    def since(self) -> str:
        now = self.now()
        read, took = now[0] - self.last[0], now[1] - self.last[1]
        self.last = now
        return f"{read:,} blocks read" + (f" in {took:.0f} ms" if self.timed else "")


def _answers(
    conn: http.client.HTTPConnection,
    big_round: str,
    blocks: Blocks,
    times: dict[str, list[float]],
    *,
    lenient: bool = False,
) -> dict[str, str]:
    """p50/p99 of the three queries, after one of each to check its answer; the blocks each
    group read from outside the server's buffers. `lenient`: a group whose request fails is
    printed as failed (its first failure) and the next group runs."""
    figures: dict[str, str] = {}

    def group(name: str, took: list[float]) -> None:
        figures[name] = f"{percentiles(took)}; {blocks.since()}"
        times[name] = took

    for name, run in _groups(conn, big_round, blocks):
        try:
            group(name, run())
        except AssertionError as error:
            if not lenient:
                raise
            figures[name] = f"FAILED: {str(error)[:300]}"
            say(f"  {name}: FAILED: {str(error)[:300]}")
            blocks.mark()
    return figures


def _groups(
    conn: http.client.HTTPConnection, big_round: str, blocks: Blocks
) -> Iterator[tuple[str, Any]]:
    """The groups of queries in their order, by name, each a call that times its requests."""
    player = "P00007"
    first: dict[str, Any] = {}

    def firsts() -> list[float]:
        _, page = timed(conn, f"/players/{player}/bets?limit=50")
        assert page["total"] == 10_000, page["total"]
        first["page"] = page
        blocks.mark()
        return [timed(conn, f"/players/{player}/bets?limit=50")[0] for _ in range(QUERIES)]

    def deep() -> list[float]:
        took: list[float] = []
        cursor = first["page"]["next_cursor"] if "page" in first else None
        if cursor is None:
            _, page = timed(conn, f"/players/{player}/bets?limit=50")
            cursor = page["next_cursor"]
            blocks.mark()
        while len(took) < QUERIES and cursor:
            try:
                seconds, page = timed(conn, f"/players/{player}/bets?limit=50&cursor={cursor}")
            except AssertionError as error:
                raise AssertionError(f"page {len(took) + 2} by cursor: {error}") from error
            took.append(seconds)
            cursor = page["next_cursor"]
        return took

    table = big_round.split("-")[0]

    def recalls() -> list[float]:
        _, recall = timed(conn, f"/tables/{table}/rounds/{big_round}")
        assert len(recall["bets"]) == BIG_ROUND, len(recall["bets"])
        blocks.mark()
        return [timed(conn, f"/tables/{table}/rounds/{big_round}")[0] for _ in range(QUERIES)]

    def reports() -> list[float]:
        _, whole = timed(conn, "/report")
        assert sum(row["bets"] for row in whole["money"]) == BETS, "the report counts every bet"
        blocks.mark()
        return [timed(conn, "/report")[0] for _ in range(QUERIES // 10)]

    yield "history first page (50 of 10,000)", firsts
    yield "history page by cursor", deep
    yield "round recall, 10,000 bets", recalls
    yield f"report, every table ({QUERIES // 10})", reports


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.readside", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--base",
        default=os.environ.get("CROUPIER_BENCH_READSIDE_BASE", ""),
        help="the git ref of the old code: its projectors and API against this work tree's, in "
        "turns over the same settled outputs (CROUPIER_BENCH_READSIDE_BASE)",
    )
    args = parser.parse_args(argv)
    s = isolated_settings(BOOTSTRAP, partitions=PARTITIONS)
    create_topics(s)
    empty_settings = isolated_settings(BOOTSTRAP, partitions=PARTITIONS)
    try:
        if args.base:
            from tests.bench.readside_ab import measure_ab

            return measure_ab(args.base, s, empty_settings, Run("bench-readside-ab"))
        return measure(s, empty_settings, Run("bench-readside"))
    finally:  # some 15 GB of topics at 10,000,000 bets: a few runs would fill the disk
        delete_topics(s)
        delete_topics(empty_settings)


def _vacuuming() -> int:
    """How many autovacuum workers the local PostgreSQL runs now (any database)."""
    worker = b"postgres: autovacuum worker"
    return sum(cmdline.startswith(worker) for _, cmdline in _processes("cmdline"))


def quiesce(limit_s: float = 120.0) -> None:
    """Start a measured phase on a machine as quiet as the one before: what the phase before
    wrote flushed to disk (some gigabytes of topics and tables, which the kernel would otherwise
    write back during the phase, on the same two processors), and no autovacuum worker of the
    database the phase before filled still running beside it (at most `limit_s`)."""
    began = time.monotonic()
    os.sync()
    synced = time.monotonic() - began
    while _vacuuming() and time.monotonic() - began < limit_s:
        time.sleep(0.5)
    left = _vacuuming()
    say(
        f"  (quiet after {time.monotonic() - began:.0f} s: sync {synced:.0f} s"
        + (f", {left} autovacuum worker(s) still running)" if left else ")")
    )


def settled_pipeline(s: Settings) -> tuple[int, int, str, float, list[float]]:
    """Step 1: the bets published and settled by croupier's workers; (bets, round events, the
    big round, settled bets/s, the processor time a bet of the workers and of Kafka)."""
    say(f"publishing {BETS:,} bets ...")
    bets, events, big_round = preload(s)
    quiesce()
    say(f"croupier workers ({WORKERS}) settle them ...")
    procs = [
        start(
            ["-m", "services.cli", "worker", "--loglevel", "warning"],
            f"rs-worker-{n}",
            LOGS,
            environment(s),
        )
        for n in range(WORKERS)
    ]
    metered = Metered(procs, ("java",))
    try:
        pipeline = (
            rate(s.group_id, list(s.inputs), bets + events, procs, LOGS, metered.begin)
            * bets
            / (bets + events)
        )
        pipeline_us = metered.per_bet(bets)
    finally:
        stop(procs)
    say(f"  pipeline: {pipeline:,.0f} settled bets/s")
    return bets, events, big_round, pipeline, pipeline_us


def measure(s: Settings, empty_settings: Settings, saving: Run) -> int:
    bets, events, big_round, pipeline, pipeline_us = settled_pipeline(s)
    with ExitStack() as stack:
        full = stack.enter_context(fresh_url("postgresql", ROOT / "test-output"))
        quiesce()
        say(f"projector ({PROJECTORS} processes sharing the partitions) ...")
        projected = project(s, full, bets, shards=PROJECTORS)
        say(f"  projector: {projected['bets_per_s']:,.0f} bets/s")
        alone = projected
        if PROJECTORS > 1:
            quiesce()
            say("projector (one process, over the same topics into another database) ...")
            with fresh_url("postgresql", ROOT / "test-output") as other:
                alone = project(s, other, bets)
            say(f"  one projector: {alone['bets_per_s']:,.0f} bets/s")
        restart_full = [restart(s, full) for _ in range(3)]
        create_topics(empty_settings)
        empty = stack.enter_context(fresh_url("postgresql", ROOT / "test-output"))
        restart_empty = [restart(empty_settings, empty) for _ in range(3)]
        say("queries right after the projection ...")
        answers, answer_times = queries(s, full, big_round)
        say("VACUUM (ANALYZE) and CHECKPOINT ...")
        settled_in = settle(full)
        say(f"  settled in {settled_in:.0f} s; queries again ...")
        settled, settled_times = queries(s, full, big_round)
    rss = projected["rss"]
    last = max(rss) if rss else 0
    print(f"bets: {bets:,} ({events:,} round events), {PARTITIONS} partitions, {WORKERS} worker(s)")
    print(f"pipeline settled bets/s:    {pipeline:,.0f}")
    runs = [(f"{PROJECTORS} projectors", projected)]
    if PROJECTORS > 1:
        runs.append(("one projector", alone))
    for name, run in runs:
        print(
            f"{name + ' bets/s:':<28}{run['bets_per_s']:,.0f} "
            f"(ratio {run['bets_per_s'] / pipeline:.2f}; target 1.5)"
        )
    workers_us, broker_us = pipeline_us
    print(
        f"{'CPU per bet, pipeline:':<28}workers {workers_us:.1f} us, Kafka {broker_us:.1f} us "
        f"(all: {workers_us + broker_us:.1f} us of the machine's time a bet)"
    )
    for name, run in runs:
        projector_us, postgres_us, kafka_us = run["cpu_us"]
        print(
            f"{'CPU per bet, ' + name + ':':<28}projector {projector_us:.1f} us, PostgreSQL "
            f"{postgres_us:.1f} us (this machine's postgres processes), Kafka {kafka_us:.1f} us; "
            f"{os.cpu_count()} cores; the pipeline's time a bet over this: "
            f"{(workers_us + broker_us) / (projector_us + postgres_us + kafka_us):.2f}"
        )
    print(
        f"projector RSS:              {rss.get(1, 0):.0f} MiB at 1,000,000 bets, "
        f"{rss.get(last, 0):.0f} MiB at {last:,},000,000, {projected['rss_end']:.0f} MiB at the end"
    )
    print(
        "restart to caught up:       full database "
        + ", ".join(f"{t:.2f} s" for t, _ in restart_full)
        + "; empty database "
        + ", ".join(f"{t:.2f} s" for t, _ in restart_empty)
    )
    print(f"{'  its steps (full):':<28}" + "; ".join(steps for _, steps in restart_full))
    print(f"{'  its steps (empty):':<28}" + "; ".join(steps for _, steps in restart_empty))
    print("HTTP, right after the projection:")
    for name, figure in answers.items():
        print(f"  {name + ':':<36}{figure}")
    print(f"HTTP, after VACUUM (ANALYZE) and CHECKPOINT ({settled_in:.0f} s):")
    for name, figure in settled.items():
        print(f"  {name + ':':<36}{figure}")
    saving.save(
        readside_figures(
            bets=bets,
            pipeline=pipeline,
            pipeline_us=pipeline_us,
            runs=runs,
            restarts=([t for t, _ in restart_full], [t for t, _ in restart_empty]),
            answers=answer_times,
            settled=settled_times,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
