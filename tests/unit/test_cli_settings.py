"""A setting the settings classes refuse ends any `croupier` command with code 2 and one line
naming the variable, its value and why, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.cli import main


def test_an_invalid_setting_is_one_line_naming_the_variable_and_exit_code_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CROUPIER_PARTITIONS", "twelve")
    assert main(["topics"]) == 2
    said = capsys.readouterr()
    [line] = said.err.splitlines()
    assert line.startswith("croupier topics: invalid settings: CROUPIER_PARTITIONS='twelve': ")
    assert "valid integer" in line and "docs/reference/settings.md" in line
    assert "Traceback" not in said.out + said.err


def test_the_read_sides_settings_are_named_with_their_own_prefix(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CROUPIER_API_PORT", "99999")
    assert main(["api"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "CROUPIER_API_PORT='99999': Input should be less than or equal to 65535" in line


def test_a_database_url_croupier_cannot_use_is_named_by_the_variable_that_was_set(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DATABASE_URL", "mysql://db/croupier")
    assert main(["projector"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(
        "croupier projector: invalid settings: DATABASE_URL='mysql://db/croupier'"
    )
    assert "postgresql://user@host:port/db (psycopg 3) or sqlite:///path" in line


def test_a_file_that_cannot_be_opened_is_one_line_and_exit_code_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(tmp_path)]) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert line == f"croupier replay: cannot open {tmp_path}: Is a directory"
