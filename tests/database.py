"""Test support for the read side's databases: a fresh PostgreSQL database or SQLite file per test.

PostgreSQL is DATABASE_URL's server when given, else the local one of `make db-up` (started here
when it is not running). Each test gets a database of its own, dropped at the end.
"""

from __future__ import annotations

import os
import random
import subprocess
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine, create_engine, make_url, text
from sqlalchemy.pool import NullPool

from services.history.migrate import upgrade
from services.history.projection import Changes, Source
from services.history.store import Store, connect, database_url
from tests.committed import Committed, shuffled
from tests.kafka import ROOT

BACKENDS = ("sqlite", "postgresql")


def server_url() -> str:
    """The PostgreSQL server the tests use, started when it is the local one and not running."""
    given = os.environ.get("DATABASE_URL")
    if given and not given.startswith("sqlite"):
        return database_url(given)
    done = subprocess.run(
        ["bash", str(ROOT / "deploy/postgres/up.sh")], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"cannot start the local PostgreSQL: {done.stderr.strip()}")
    line = next(x for x in done.stdout.splitlines() if "DATABASE_URL=" in x)
    return line.split("DATABASE_URL=", 1)[1].strip()


@contextmanager
def fresh_url(backend: str, directory: Path) -> Iterator[str]:
    """The URL of an empty database of the backend, removed afterwards."""
    if backend == "sqlite":
        yield f"sqlite:///{directory / f'readside-{uuid.uuid4().hex[:8]}.sqlite'}"
        return
    server = make_url(server_url())
    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(
        server.set(database="postgres"), isolation_level="AUTOCOMMIT", poolclass=NullPool
    )
    try:
        with admin.connect() as db:
            db.execute(text(f'CREATE DATABASE "{name}"'))
        yield server.set(database=name).render_as_string(hide_password=False)
        with admin.connect() as db:
            db.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


@contextmanager
def migrated(backend: str, directory: Path) -> Iterator[Engine]:
    """An engine on a fresh, migrated database of the backend."""
    with fresh_url(backend, directory) as url:
        engine = connect(url)
        try:
            upgrade(engine)
            yield engine
        finally:
            engine.dispose()


def project(
    store: Store,
    messages: Iterable[tuple[Source, bytes, int]],
    rng: random.Random,
    *,
    largest: int = 300,
) -> None:
    """Write the messages in batches of random sizes, each with its positions (one partition)."""
    items = list(messages)
    topics = sorted({source for source, _, _ in items})
    stored = store.begin_at({(topic, 0): 0 for topic in topics})
    offsets = Counter({topic: stored[(topic, 0)] for topic in topics})
    start = 0
    while start < len(items):
        size = rng.randint(1, largest)
        changes, moves = Changes(), {}
        for source, raw, timestamp in items[start : start + size]:
            changes.feed(source, raw, timestamp)
            old = moves.get((source, 0), (offsets[source], 0))[0]
            offsets[source] += 1
            moves[(source, 0)] = (old, offsets[source])
        store.write(changes, moves)
        start += size


def project_all(store: Store, committed: Committed, seed: int = 0) -> None:
    """Every committed message, the topics merged at random, in batches of random sizes."""
    rng = random.Random(seed)
    project(store, shuffled(committed, rng), rng)
