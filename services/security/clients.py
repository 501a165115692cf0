"""The one place that turns settings into the keyword arguments of every Kafka client.

Every producer, consumer and admin client croupier builds (confluent-kafka, aiokafka, kafka-python,
faust) takes its address and security from here, so a secured cluster needs nothing more than the
settings (`CROUPIER_KAFKA_SECURITY_PROTOCOL`, `_SASL_MECHANISM`, `_USERNAME`, `_PASSWORD` or
`_PASSWORD_FILE`, `_CA_FILE`). The returned dictionaries hold the password in clear, as the
clients need it: pass them on, never print or log them.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

from services.settings import Settings


class Secret(str):
    """A password as the clients need it (a str), that repr() shows masked: kafka-python logs its
    whole configuration at DEBUG, and a dictionary prints its values with repr()."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "'**********'"


class SecurityConfigError(ValueError):
    """The security settings do not make a usable client; the message says which to fix."""


def sasl(settings: Settings) -> bool:
    return settings.kafka_security_protocol in ("SASL_SSL", "SASL_PLAINTEXT")


def tls(settings: Settings) -> bool:
    return settings.kafka_security_protocol in ("SASL_SSL", "SSL")


def principal(settings: Settings) -> str:
    """The principal the brokers will see, as ACLs name it."""
    if sasl(settings):
        return f"User:{settings.kafka_username}"
    protocol = settings.kafka_security_protocol
    return f"User:ANONYMOUS (no login: CROUPIER_KAFKA_SECURITY_PROTOCOL={protocol})"


def password(settings: Settings) -> Secret:
    """The SASL password: CROUPIER_KAFKA_PASSWORD, else the first line of the password file."""
    if settings.kafka_password is not None:
        return Secret(settings.kafka_password.get_secret_value())
    if settings.kafka_password_file is None:
        raise SecurityConfigError(
            f"CROUPIER_KAFKA_SECURITY_PROTOCOL={settings.kafka_security_protocol} needs a "
            "password: set CROUPIER_KAFKA_PASSWORD_FILE (or CROUPIER_KAFKA_PASSWORD)"
        )
    path = Path(settings.kafka_password_file)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise SecurityConfigError(
            f"CROUPIER_KAFKA_PASSWORD_FILE={path} cannot be read ({error.strerror}); point it at "
            "the principal's password file (the local broker's are in .data/kafka/clients/)"
        ) from None
    if not lines or not lines[0]:
        raise SecurityConfigError(f"CROUPIER_KAFKA_PASSWORD_FILE={path} is empty")
    return Secret(lines[0])


def _checked(settings: Settings) -> None:
    if sasl(settings) and not settings.kafka_username:
        raise SecurityConfigError(
            f"CROUPIER_KAFKA_SECURITY_PROTOCOL={settings.kafka_security_protocol} needs a "
            "principal: set CROUPIER_KAFKA_USERNAME"
        )
    if settings.kafka_ca_file is not None and not Path(settings.kafka_ca_file).is_file():
        raise SecurityConfigError(
            f"CROUPIER_KAFKA_CA_FILE={settings.kafka_ca_file} is not a file; point it at the PEM "
            "of the CA that signed the brokers' certificates (the local broker's: "
            ".data/kafka/tls/ca.pem)"
        )


def ssl_context(settings: Settings) -> ssl.SSLContext:
    """A client TLS context that verifies the brokers' certificates and host names."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=settings.kafka_ca_file)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


def kafka_python(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for kafka-python's KafkaProducer, KafkaConsumer and KafkaAdminClient:
    aiokafka's, and the host-name check kafka-python asks for apart."""
    options = aiokafka(settings)
    if tls(settings):
        options["ssl_check_hostname"] = True
    return options


def aiokafka(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for aiokafka's AIOKafkaProducer, AIOKafkaConsumer and admin client."""
    _checked(settings)
    options: dict[str, Any] = {
        "bootstrap_servers": settings.kafka_bootstrap,
        "security_protocol": settings.kafka_security_protocol,
    }
    if tls(settings):
        options["ssl_context"] = ssl_context(settings)
    if sasl(settings):
        options["sasl_mechanism"] = settings.kafka_sasl_mechanism
        options["sasl_plain_username"] = settings.kafka_username
        options["sasl_plain_password"] = password(settings)
    return options


def librdkafka(settings: Settings) -> dict[str, Any]:
    """The configuration of a confluent-kafka (librdkafka) client: address and security.

    TLS verifies the brokers' certificates and host names, as `ssl_context` does."""
    _checked(settings)
    config: dict[str, Any] = {
        "bootstrap.servers": settings.kafka_bootstrap,
        "security.protocol": settings.kafka_security_protocol.lower(),
    }
    if tls(settings):
        config["ssl.endpoint.identification.algorithm"] = "https"
        if settings.kafka_ca_file is not None:
            config["ssl.ca.location"] = settings.kafka_ca_file
    if sasl(settings):
        config["sasl.mechanisms"] = settings.kafka_sasl_mechanism
        config["sasl.username"] = settings.kafka_username
        config["sasl.password"] = password(settings)
    return config


def faust_broker(settings: Settings) -> dict[str, Any]:
    """Keyword arguments of a faust.App for the brokers: `broker` and `broker_credentials`."""
    import faust

    _checked(settings)
    url = ";".join(f"kafka://{host}" for host in settings.kafka_bootstrap.split(","))
    options: dict[str, Any] = {"broker": url}
    match settings.kafka_security_protocol:
        case "SASL_SSL" | "SASL_PLAINTEXT":
            options["broker_credentials"] = faust.SASLCredentials(
                username=settings.kafka_username,
                password=password(settings),
                mechanism=settings.kafka_sasl_mechanism,
                ssl_context=ssl_context(settings) if tls(settings) else None,
            )
        case "SSL":
            options["broker_credentials"] = faust.SSLCredentials(ssl_context(settings))
        case "PLAINTEXT":
            pass
    return options
