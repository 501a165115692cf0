"""`croupier api` checks tokens unless told not to: with no JWKS it refuses to start, in one line
naming the variables to set; CROUPIER_API_AUTH=off is accepted and said. `croupier token` and the
local issuer of `make run`."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
)

from services.cli import main
from services.history.access import Rejected, Verified
from services.history.issuer import local, public_jwk
from services.history.service import access_line, token_checks
from services.history.settings import AuthSettings
from services.history.tokens import key_id, key_set, pick, verify
from tests.tokens import RSA


@pytest.fixture(autouse=True)
def no_api_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("CROUPIER_API_"):
            monkeypatch.delenv(name)


def test_with_auth_on_and_no_jwks_croupier_api_refuses_in_one_line_and_exit_code_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["api", "--serve-only"]) == 2
    said = capsys.readouterr()
    [line] = said.err.splitlines()
    assert line.startswith("croupier api: invalid settings: the API checks bearer tokens")
    assert "set CROUPIER_API_JWKS_FILE or CROUPIER_API_JWKS_URL" in line
    assert "CROUPIER_API_AUTH=off" in line and "Traceback" not in said.out + said.err


def test_a_jwks_file_and_url_together_are_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CROUPIER_API_JWKS_FILE", "/etc/jwks.json")
    monkeypatch.setenv("CROUPIER_API_JWKS_URL", "https://idp.example/jwks.json")
    assert main(["api"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "CROUPIER_API_JWKS_FILE and CROUPIER_API_JWKS_URL are both set: set one" in line


def test_a_jwks_url_that_is_no_web_address_is_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CROUPIER_API_JWKS_URL", "/etc/jwks.json")
    assert main(["api"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "CROUPIER_API_JWKS_URL='/etc/jwks.json': Value error, not a JWKS URL" in line


def test_a_jwks_file_without_a_usable_key_stops_the_start_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    jwks = tmp_path / "jwks.json"
    jwks.write_text('{"keys": []}')
    monkeypatch.setenv("CROUPIER_API_JWKS_FILE", str(jwks))
    assert main(["api"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert (
        line
        == f"croupier api: CROUPIER_API_JWKS_FILE {jwks}: no usable signing key (EdDSA or RS256)"
    )
    monkeypatch.setenv("CROUPIER_API_JWKS_FILE", str(tmp_path / "missing.json"))
    assert main(["api"]) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"croupier api: cannot open {tmp_path / 'missing.json'}")


def test_auth_off_needs_no_jwks_checks_nothing_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CROUPIER_API_AUTH", "off")
    settings = AuthSettings()
    assert settings.auth is False and token_checks(settings) is None
    assert access_line(settings).startswith("access control is OFF (CROUPIER_API_AUTH=off)")


def test_auth_on_says_where_its_keys_come_from(tmp_path: Path) -> None:
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps({"keys": [public_jwk(RSA)]}))
    settings = AuthSettings(jwks_file=str(jwks), leeway_s=5)
    checks = token_checks(settings)
    assert checks is not None and (checks.audience, checks.leeway) == ("croupier", 5)
    assert f"keys of the JWKS file {jwks}" in access_line(settings)
    assert "history:read" in access_line(settings) and "report:read" in access_line(settings)


def test_the_local_issuer_makes_its_key_once_and_reuses_it(tmp_path: Path) -> None:
    first = local(tmp_path / "auth")
    assert stat.S_IMODE(first.key_file.stat().st_mode) == 0o600
    first.jwks_file.unlink()
    again = local(tmp_path / "auth")
    assert public_jwk(again.key) == public_jwk(first.key)
    assert json.loads(again.jwks_file.read_text()) == {"keys": [public_jwk(first.key)]}


def _verified(value: str, jwks: dict[str, object]) -> Verified | Rejected:
    kid = key_id(value)
    assert not isinstance(kid, Rejected)
    key = pick(key_set(json.dumps(jwks)), kid)
    assert key is not None
    return verify(value, key, audience="croupier", issuer=None, leeway=0)


def test_croupier_token_signs_with_the_key_given_or_the_local_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pem = tmp_path / "rsa.pem"
    pem.write_bytes(RSA.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
    assert main(["token", "--key", str(pem), "--scope", "report:read", "--days", "1"]) == 0
    found = _verified(capsys.readouterr().out.strip(), {"keys": [public_jwk(RSA)]})
    assert isinstance(found, Verified) and found.claims["scope"] == "report:read"
    assert found.claims["exp"] - found.claims["iat"] == 86400
    monkeypatch.chdir(tmp_path)
    assert main(["token"]) == 0
    jwks = json.loads((tmp_path / ".data/auth/jwks.json").read_text())
    found = _verified(capsys.readouterr().out.strip(), jwks)
    assert isinstance(found, Verified)
    assert found.claims["scope"] == "history:read report:read"


def test_croupier_token_refuses_a_file_that_is_no_private_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "key.pem"
    junk.write_text("not a key")
    assert main(["token", "--key", str(junk)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"croupier token: {junk}: not an unencrypted PEM private key")
