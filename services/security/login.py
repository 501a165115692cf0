"""A first connection to each bootstrap broker, so that a refused login is said at once.

Both clients hide it otherwise: aiokafka says only "Unable to bootstrap", and kafka-python retries a
failed SASL login silently until its timeout (30 s). `login` connects once, as the long-lived
clients will, and tells the three cases apart: nothing listens (the broker is not up yet: the
caller may wait), the broker refused the login or the conversation (wrong password, unknown user,
a plaintext client on a TLS listener, an untrusted certificate: `AccessDenied`, never retried),
or all is well.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl

from aiokafka.conn import create_conn  # type: ignore[import-untyped]

from services.blocking import finish
from services.security import clients
from services.security.denied import AccessDenied, authentication, explain
from services.settings import Settings


class Unreachable(ConnectionError):
    """No bootstrap broker accepted a connection: none is listening (yet)."""


def _address(entry: str) -> tuple[str, int]:
    host, _, port = entry.strip().rpartition(":")
    return host.strip("[]"), int(port)


def _refused(settings: Settings, address: str, error: BaseException) -> AccessDenied:
    """A connection that was accepted and then failed: security settings that do not match."""
    who = clients.principal(settings)
    protocol = settings.kafka_security_protocol
    if isinstance(error, ssl.SSLCertVerificationError):
        why = (
            f"its certificate is not trusted ({error.verify_message}): set "
            "CROUPIER_KAFKA_CA_FILE to the CA that signed it (the local broker's: "
            ".data/kafka/tls/ca.pem)"
        )
    elif isinstance(error, ssl.SSLError):
        why = (
            f"the TLS handshake failed ({error}): is the listener TLS? "
            "(CROUPIER_KAFKA_SECURITY_PROTOCOL)"
        )
    else:
        why = (
            f"it closed the connection ({error}): its listener expects other security settings "
            "than CROUPIER_KAFKA_SECURITY_PROTOCOL="
            f"{protocol} (a secured broker: SASL_SSL with a login, .data/kafka/clients/<role>.env)"
        )
    return AccessDenied(f"{who} was refused by {address}: {why}", principal=who)


async def login(settings: Settings, timeout: float = 10.0) -> None:
    """Connect (TLS and SASL included) to the bootstrap brokers until one accepts the login.

    Raises AccessDenied when one refused it, Unreachable when none was listening.
    """
    options = clients.aiokafka(settings)
    options.pop("bootstrap_servers")
    failures: list[str] = []
    for entry in settings.kafka_bootstrap.split(","):
        host, port = _address(entry)
        try:
            conn = await asyncio.wait_for(
                create_conn(
                    host,
                    port,
                    client_id="croupier-login",
                    request_timeout_ms=int(timeout * 1000),
                    **options,
                ),
                timeout,
            )
        except ssl.SSLError as error:
            raise _refused(settings, entry, error) from None
        except (ConnectionRefusedError, TimeoutError, socket.gaierror) as error:
            failures.append(f"{entry}: {error!r}")
            continue
        except Exception as error:  # accepted, then failed: the login or the protocol
            if authentication(error):
                denied = explain(
                    error, settings, doing="connect", resource=f"broker {entry}", operation="login"
                )
                assert denied is not None
                raise denied from None
            raise _refused(settings, entry, error) from None
        with contextlib.suppress(TimeoutError):  # let the transport go before the loop does
            await asyncio.wait_for(conn.close(), timeout)
        return
    raise Unreachable(
        f"no broker listens at {settings.kafka_bootstrap} ({'; '.join(failures)}); is it up "
        "(`make kafka-up`, or KAFKA_BOOTSTRAP)?"
    )


def check(settings: Settings, timeout: float = 10.0) -> None:
    """`login` for code without an event loop (the kafka-python clients, the commands)."""
    finish(login(settings, timeout), name="croupier-login")
