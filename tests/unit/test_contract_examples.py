"""docs/CONTRACT.md's worked examples are true, so the document cannot drift from the code.

Each example is a fenced block after a marker: `<!-- input: docs/examples/F.jsonl -->` is followed
by the file's exact content, `<!-- output: croupier replay [--stats] docs/examples/F.jsonl -->` by
exactly what that command writes.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from schemas.records import Record

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "CONTRACT.md"
EXAMPLES = ROOT / "docs" / "examples"
BLOCK = re.compile(r"<!-- (input|output): (.+?) -->\n```json\n(.*?)```\n", re.DOTALL)


def _blocks(kind: str) -> list[tuple[str, str]]:
    """(what the marker names, the block's text) of every block of one kind, in document order."""
    text = DOC.read_text(encoding="utf-8")
    return [(what, body) for k, what, body in BLOCK.findall(text) if k == kind]


def _cases(kind: str) -> list[object]:
    return [pytest.param(what, body, id=what) for what, body in _blocks(kind)]


def _example_file(command: str) -> str:
    return command.split()[-1]


def test_every_example_file_is_shown_once_with_its_input_and_its_replay() -> None:
    files = sorted(f"docs/examples/{path.name}" for path in EXAMPLES.glob("*.jsonl"))
    inputs = [what for what, _ in _blocks("input")]
    outputs = [_example_file(command) for command, _ in _blocks("output")]
    assert len(files) >= 5
    assert sorted(inputs) == files
    assert sorted(outputs) == files


@pytest.mark.parametrize(("path", "shown"), _cases("input"))
def test_an_example_input_shown_in_the_contract_is_its_file_exactly(path: str, shown: str) -> None:
    assert shown == (ROOT / path).read_text(encoding="utf-8")


@pytest.mark.parametrize(("command", "shown"), _cases("output"))
def test_an_example_output_shown_in_the_contract_is_what_croupier_replay_writes(
    command: str, shown: str
) -> None:
    program, *args = command.split()
    assert (program, args[0]) == ("croupier", "replay")
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", *args],
        capture_output=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert shown.encode() == done.stdout
    for line in done.stdout.splitlines():
        msgspec.json.decode(line, type=Record, strict=True)


def test_the_examples_show_every_record_type_and_every_decision() -> None:
    records = [
        msgspec.json.decode(line)
        for _, shown in _blocks("output")
        for line in shown.encode().splitlines()
    ]
    assert {r["type"] for r in records} == {
        "settlement",
        "refund",
        "adjustment",
        "rejected",
        "table_stats",
    }
    assert {r["game"] for r in records if r["type"] == "settlement"} == {
        "sicbo",
        "thai-hilo",
        "xocdia",
    }
    assert {r["reason"] for r in records if r["type"] == "refund"} == {
        "round_cancelled",
        "late_bet",
        "invalid_bet",
    }
    assert {r["cause"] for r in records if r["type"] == "adjustment"} == {"correction", "void"}
    assert {r["result"] for r in records if r["type"] == "settlement"} == {"win", "lose", "push"}
    assert {r["reason"] for r in records if r["type"] == "rejected"} == {
        "malformed",
        "unknown_type",
        "unsupported_version",
        "invalid_field",
        "invalid_transition",
        "conflicting_duplicate",
        "duplicate_seq",
        "bad_signature",
    }
