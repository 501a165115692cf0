"""`make run`'s read side checks tokens too: the run makes a local key and its JWKS once, points
the API at it and prints a token with a curl line, unless the environment already says how the
API checks tokens."""

from __future__ import annotations

import argparse
import io
import json
import os
import stat
from pathlib import Path

import pytest

from services.history.access import Rejected, Verified
from services.history.tokens import key_id, key_set, pick, verify
from services.run import Run, Stopper


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith("CROUPIER_API_"):
            monkeypatch.delenv(name)
    return Run(argparse.Namespace(), Stopper(), io.StringIO())


def test_the_run_points_its_api_at_a_local_jwks_and_prints_a_30_day_token_of_both_scopes(
    run: Run, tmp_path: Path
) -> None:
    said = run._api_access(8080)
    jwks = tmp_path / ".data/auth/jwks.json"
    assert run.env["CROUPIER_API_JWKS_FILE"] == str(jwks)
    saved = tmp_path / ".data/auth/token"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    value = saved.read_text().strip()
    assert said[0].endswith(value) and "history:read report:read, 30 days" in said[0]
    assert said[1] == (
        f'try: curl -H "Authorization: Bearer $(cat {Path(".data/auth/token")})" '
        "http://127.0.0.1:8080/players/P00001/bets"
    )
    kid = key_id(value)
    assert not isinstance(kid, Rejected)
    key = pick(key_set(jwks.read_text()), kid)
    assert key is not None
    found = verify(value, key, audience="croupier", issuer=None, leeway=0)
    assert isinstance(found, Verified)
    assert found.claims["scope"] == "history:read report:read"
    assert found.claims["exp"] - found.claims["iat"] == 30 * 86400


def test_a_second_run_reuses_the_key_and_mints_a_new_token(run: Run, tmp_path: Path) -> None:
    run._api_access(8080)
    first = (tmp_path / ".data/auth/jwks.json").read_text()
    run._api_access(8080)
    assert (tmp_path / ".data/auth/jwks.json").read_text() == first
    assert len(json.loads(first)["keys"]) == 1


@pytest.mark.parametrize(
    "variable",
    [
        ("CROUPIER_API_AUTH", "off"),
        ("CROUPIER_API_JWKS_URL", "https://idp/jwks.json"),
        ("CROUPIER_API_JWKS_FILE", "/etc/jwks.json"),
    ],
)
def test_a_run_told_how_the_api_checks_tokens_makes_no_key(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: tuple[str, str]
) -> None:
    monkeypatch.setenv(*variable)
    [line] = run._api_access(8080)
    assert line.startswith("read-side API access as configured")
    assert not (tmp_path / ".data/auth").exists()
    assert "CROUPIER_API_JWKS_FILE" not in run.env or variable[0] == "CROUPIER_API_JWKS_FILE"
