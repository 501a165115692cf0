"""The references under docs/reference/ are what the code says now: every setting, every command
and flag, every metric; a change to any of them without `make reference` fails here."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from services.cli import parser
from services.history import tally
from services.history.settings import ApiSettings, AuthSettings
from services.reference import WIDTH, main, paragraph, render, variables
from services.settings import Settings
from services.settlement import metrics

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference"
FILES = ("settings.md", "cli.md", "metrics.md")


@pytest.mark.parametrize("name", FILES)
def test_the_committed_reference_is_what_the_generator_writes_now(name: str) -> None:
    path = REFERENCE / name
    assert path.exists(), f"{path} is missing: run `make reference` and commit docs/reference/"
    assert path.read_text(encoding="utf-8") == render()[name], (
        f"{path} is stale (a setting, command, flag or metric changed): run `make reference` "
        "and commit docs/reference/"
    )


def test_the_generator_writes_every_reference_and_wants_one_directory(tmp_path: Path) -> None:
    assert main([str(tmp_path / "reference")]) == 0
    assert sorted(p.name for p in (tmp_path / "reference").iterdir()) == sorted(FILES)
    assert main([]) == 2


@pytest.mark.parametrize("kind", [Settings, ApiSettings, AuthSettings])
def test_every_setting_is_described_and_listed_under_each_of_its_variables(kind: type) -> None:
    text = render()["settings.md"]
    for name, field in kind.model_fields.items():
        assert field.description, f"{kind.__name__}.{name} has no description for the reference"
        for variable in variables(kind, name, field):
            assert f"`{variable}`" in text


def test_the_aliases_are_the_variables_people_set() -> None:
    text = render()["settings.md"]
    assert "| `KAFKA_BOOTSTRAP`, `CROUPIER_KAFKA_BOOTSTRAP` |" in text
    assert "| `DATABASE_URL`, `CROUPIER_API_DATABASE_URL` |" in text


def _parsers(
    top: argparse.ArgumentParser,
) -> list[tuple[str, argparse.ArgumentParser]]:
    found = []
    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append((name, sub))
                found += [(f"{name} {deeper}", p) for deeper, p in _parsers(sub)]
    return found


def test_every_command_and_every_flag_it_documents_is_in_the_reference() -> None:
    text = render()["cli.md"]
    commands = _parsers(parser())
    assert len(commands) >= 16
    for name, sub in commands:
        assert f"## `croupier {name}`" in text
        for action in sub._actions:
            if action.help != argparse.SUPPRESS and not isinstance(action, argparse._HelpAction):
                for flag in action.option_strings:
                    assert f"`{flag}" in text, (name, flag)


def test_every_metric_of_every_process_is_in_the_reference_with_its_type() -> None:
    text = render()["metrics.md"]
    for family in (*metrics.FAMILIES, *tally.FAMILIES):
        assert f"| `{family.name}` | {family.kind} |" in text


def test_prose_is_wrapped_at_the_width_and_a_line_never_starts_a_list() -> None:
    text = "a" * 95 + " (x) - for standard input, " + "b " * 60
    lines = paragraph(text).splitlines()
    assert lines[0] == "a" * 95
    assert lines[1].startswith("(x) - for standard input,")
    assert all(len(line) <= WIDTH for line in lines)
    assert " ".join(lines) == " ".join(text.split())


def test_a_word_longer_than_the_width_has_a_line_of_its_own() -> None:
    long = "`" + "x" * 120 + "`"
    assert paragraph(f"see {long} here") == f"see\n{long}\nhere"
