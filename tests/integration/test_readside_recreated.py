"""A read-side database ahead of recreated topics: the projector stops with one line and exit
code 3; `croupier run` moves its own SQLite file aside and goes on, and leaves a database the user
named alone, saying what to do."""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
from pathlib import Path

import pytest

from services.history.migrate import upgrade
from services.history.store import Store, connect, database_url
from services.run import Run, Stopper
from services.settings import Settings
from tests.kafka import ROOT, create_topics, environment, isolated_settings


def _ahead(url: str, settings: Settings) -> None:
    """A database that projected partition 0 of `accepted` up to offset 500 (its topic is new)."""
    engine = connect(url)
    try:
        upgrade(engine)
        Store(engine).begin_at({(settings.topic_accepted, 0): 500})
    finally:
        engine.dispose()


def _run(out: io.StringIO) -> Run:
    return Run(argparse.Namespace(workers=1), Stopper(), out)


def test_the_projector_over_a_database_ahead_of_the_topics_exits_3_with_one_line(
    kafka: str, tmp_path: Path
) -> None:
    settings = isolated_settings(kafka, partitions=2)
    create_topics(settings)
    url = f"sqlite:///{tmp_path / 'ahead.sqlite'}"
    _ahead(url, settings)
    env = {**environment(settings), "DATABASE_URL": url}
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "projector"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    said = done.stdout + done.stderr
    assert done.returncode == 3, said
    assert "Traceback" not in said
    [line] = [x for x in said.splitlines() if "past its end" in x]
    assert f"{settings.topic_accepted}[0] up to offset 500, past its end (0)" in line
    assert "another DATABASE_URL, or delete .data/readside.sqlite" in line


def test_croupier_run_moves_its_own_database_aside_and_goes_on(
    kafka: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = isolated_settings(kafka, partitions=2)
    create_topics(settings)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("CROUPIER_API_DATABASE_URL", raising=False)
    _ahead(database_url(None), settings)
    out = io.StringIO()
    resets: list[str] = []
    assert _run(out)._readside_follows(kafka, resets)
    data = tmp_path / ".data"
    assert not (data / "readside.sqlite").exists()
    [aside] = list(data.glob("readside-*.sqlite"))
    assert resets == [
        f"moved the read side's .data/readside.sqlite, ahead of the recreated topics, to "
        f".data/{aside.name}"
    ]
    assert out.getvalue() == "", "the run says it with what else it reset, in one line"
    resets = []
    assert _run(out)._readside_follows(kafka, resets), "nothing left to move: it goes on"
    assert resets == [] and out.getvalue() == ""


def test_croupier_run_leaves_a_named_database_alone_and_says_what_to_do(
    kafka: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = isolated_settings(kafka, partitions=2)
    create_topics(settings)
    named = tmp_path / "named.sqlite"
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{named}")
    _ahead(f"sqlite:///{named}", settings)
    before = named.read_bytes()
    out = io.StringIO()
    resets: list[str] = []
    assert not _run(out)._readside_follows(kafka, resets)
    assert resets == []
    lines = [x for x in out.getvalue().splitlines() if x.strip()]
    assert len(lines) == 1 and "past its end (0)" in lines[0]
    assert named.read_bytes() == before
