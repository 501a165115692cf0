"""Settings into client keyword arguments: one place, every client, and never a password shown."""

from __future__ import annotations

import logging
import ssl
from pathlib import Path

import pytest
from pydantic import SecretStr

from services.security import clients
from services.security.clients import SecurityConfigError
from services.settings import Settings

SECRET = "s3cret-not-to-be-seen"


def _secured(tmp_path: Path, **extra: object) -> Settings:
    password = tmp_path / "game.password"
    password.write_text(f"{SECRET}\nsecond line is ignored\n")
    given: dict[str, object] = {
        "kafka_bootstrap": "127.0.0.1:9092",
        "kafka_security_protocol": "SASL_SSL",
        "kafka_username": "game",
        "kafka_password_file": str(password),
        **extra,
    }
    return Settings(**given)  # type: ignore[arg-type]


def test_a_plaintext_client_gets_the_address_and_nothing_else() -> None:
    plain = Settings(kafka_bootstrap="10.0.0.1:9092")
    expected = {"bootstrap_servers": "10.0.0.1:9092", "security_protocol": "PLAINTEXT"}
    assert clients.kafka_python(plain) == expected
    assert clients.aiokafka(plain) == expected
    assert clients.faust_broker(plain) == {"broker": "kafka://10.0.0.1:9092"}


def test_a_sasl_ssl_client_logs_in_with_scram_and_verifies_the_brokers(tmp_path: Path) -> None:
    options = clients.kafka_python(_secured(tmp_path))
    assert options["security_protocol"] == "SASL_SSL"
    assert options["sasl_mechanism"] == "SCRAM-SHA-512"
    assert options["sasl_plain_username"] == "game"
    assert options["sasl_plain_password"] == SECRET
    context = options["ssl_context"]
    assert isinstance(context, ssl.SSLContext)
    assert context.check_hostname and context.verify_mode == ssl.CERT_REQUIRED
    aio = clients.aiokafka(_secured(tmp_path))
    assert {k: v for k, v in aio.items() if k != "ssl_context"} == {
        k: v for k, v in options.items() if k not in ("ssl_context", "ssl_check_hostname")
    }


def test_the_password_comes_from_the_environment_before_the_file(tmp_path: Path) -> None:
    given = _secured(tmp_path, kafka_password=SecretStr("from-env"))
    assert clients.password(given) == "from-env"
    assert clients.password(_secured(tmp_path)) == SECRET


def test_a_faust_app_gets_sasl_credentials_over_tls(tmp_path: Path) -> None:
    options = clients.faust_broker(_secured(tmp_path, kafka_bootstrap="a:1,b:2"))
    assert options["broker"] == "kafka://a:1;kafka://b:2"
    credentials = options["broker_credentials"]
    assert credentials.username == "game" and credentials.password == SECRET
    assert credentials.mechanism.value == "SCRAM-SHA-512"
    assert credentials.protocol.value == "SASL_SSL"


def test_the_password_is_never_in_the_settings_or_the_options_as_printed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    for settings in (_secured(tmp_path), _secured(tmp_path, kafka_password=SecretStr(SECRET))):
        options = clients.kafka_python(settings)
        faust = clients.faust_broker(settings)
        shown = [repr(settings), str(settings), repr(options), str(options), repr(faust)]
        with caplog.at_level(logging.DEBUG):
            logging.getLogger("croupier.test").debug("configuration: %s %r", options, settings)
        assert all(SECRET not in text for text in shown)
        assert SECRET not in caplog.text
        assert "**********" in repr(options)


def test_a_sasl_client_without_a_user_is_refused_before_connecting(tmp_path: Path) -> None:
    with pytest.raises(SecurityConfigError, match="CROUPIER_KAFKA_USERNAME"):
        clients.kafka_python(_secured(tmp_path, kafka_username=None))


def test_a_sasl_client_without_a_password_says_which_setting_to_give() -> None:
    settings = Settings(kafka_security_protocol="SASL_SSL", kafka_username="game")
    with pytest.raises(SecurityConfigError, match="CROUPIER_KAFKA_PASSWORD_FILE"):
        clients.aiokafka(settings)


def test_an_unreadable_password_file_is_named(tmp_path: Path) -> None:
    settings = _secured(tmp_path, kafka_password_file=str(tmp_path / "missing.password"))
    with pytest.raises(SecurityConfigError, match=r"missing\.password"):
        clients.kafka_python(settings)


def test_a_missing_ca_file_is_named(tmp_path: Path) -> None:
    settings = _secured(tmp_path, kafka_ca_file=str(tmp_path / "nowhere.pem"))
    with pytest.raises(SecurityConfigError, match=r"nowhere\.pem"):
        clients.kafka_python(settings)


def test_the_security_settings_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CROUPIER_KAFKA_SECURITY_PROTOCOL", "SASL_SSL")
    monkeypatch.setenv("CROUPIER_KAFKA_USERNAME", "wallet")
    monkeypatch.setenv("CROUPIER_KAFKA_PASSWORD", SECRET)
    settings = Settings()
    assert clients.principal(settings) == "User:wallet"
    assert clients.password(settings) == SECRET
    assert SECRET not in repr(settings)
