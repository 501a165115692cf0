"""Authentication and authorization failures, said plainly: who was refused what, and what to do.

The Kafka clients raise them under many names (aiokafka's and kafka-python's own classes, some as
a bare connection failure); `explain` recognises each and returns one `AccessDenied`, which every
command prints and exits on (code 2) rather than retrying: a refusal does not heal by waiting.
"""

from __future__ import annotations

from typing import Any

from services.security import clients
from services.settings import Settings

TOPIC_AUTHORIZATION_FAILED = 29
"""Kafka's error code of a topic the principal may not describe."""

AUTHORIZATION = {
    "TopicAuthorizationFailedError": "topic",
    "GroupAuthorizationFailedError": "group",
    "TransactionalIdAuthorizationFailed": "transactional_id",
    "TransactionalIdAuthorizationFailedError": "transactional_id",
    "ClusterAuthorizationFailedError": "cluster",
    # librdkafka names the broker's error code in its KafkaError
    "TOPIC_AUTHORIZATION_FAILED": "topic",
    "GROUP_AUTHORIZATION_FAILED": "group",
    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": "transactional_id",
    "CLUSTER_AUTHORIZATION_FAILED": "cluster",
}
AUTHENTICATION = {
    "AuthenticationFailedError",
    "SaslAuthenticationFailed",
    "SaslAuthenticationFailedError",
    "UnsupportedSaslMechanismError",
    "IllegalSaslStateError",
}


class AccessDenied(RuntimeError):
    """The brokers refused this principal: authentication failed, or an ACL is missing."""

    def __init__(self, message: str, *, principal: str) -> None:
        super().__init__(message)
        self.principal = principal


def _chain(error: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    seen: BaseException | None = error
    while seen is not None and seen not in found:
        found.append(seen)
        seen = seen.__cause__ or seen.__context__
    return found


def authorization(error: BaseException) -> str | None:
    """The kind of resource an authorization failure is about, None if it is none (kafka-python
    wraps some in a plain KafkaError that names the broker's error only in its text)."""
    for cause in _chain(error):
        kind = AUTHORIZATION.get(type(cause).__name__)
        if kind is not None:
            return kind
        for name, kind in AUTHORIZATION.items():
            if name in str(cause):
                return kind
    return None


LIBRDKAFKA_AUTHENTICATION = ("SASL_AUTHENTICATION_FAILED", "code=_AUTHENTICATION")
"""How librdkafka's KafkaError spells a failed login."""


def authentication(error: BaseException) -> bool:
    return any(
        type(cause).__name__ in AUTHENTICATION
        or any(name in str(cause) for name in LIBRDKAFKA_AUTHENTICATION)
        for cause in _chain(error)
    )


def _named(error: BaseException) -> str:
    """The resource names a client put in its error (aiokafka: the set of topics), if any."""
    for cause in _chain(error):
        for arg in cause.args:
            if isinstance(arg, set | frozenset | list | tuple) and arg:
                return ", ".join(sorted(str(a) for a in arg))
    return ""


def explain(
    error: BaseException, settings: Settings, *, doing: str, resource: str, operation: str
) -> AccessDenied | None:
    """The failure as an AccessDenied naming the principal, the resource and the permission it
    lacks (as far as the client said), and what to do; None when it is no access failure.

    `resource` and `operation` are what the caller was using ("topic settlements", "Write");
    an error that names other resources (aiokafka names the topics) says those instead.
    """
    who = clients.principal(settings)
    if authentication(error):
        return AccessDenied(
            f"{who} could not log in to {settings.kafka_bootstrap} "
            f"({settings.kafka_security_protocol} {settings.kafka_sasl_mechanism}: {error}), "
            f"so it cannot {doing}; "
            "check CROUPIER_KAFKA_USERNAME and the password (CROUPIER_KAFKA_PASSWORD_FILE; the "
            "local broker's are in .data/kafka/clients/<role>.password), or ask the operator to "
            "create or rotate the user (`croupier acls --passwords DIR`)",
            principal=who,
        )
    kind = authorization(error)
    if kind is None:
        return None
    named = _named(error)
    what = f"{kind} {named}" if named and not resource.endswith(named) else resource
    return AccessDenied(
        f"{who} is not allowed to {doing}: the brokers refused {operation} on {what} "
        f"({type(error).__name__}); run it with the principal of the role that does this "
        "(.data/kafka/clients/<role>.env), or have the operator grant it in services/roles.py "
        "and apply it (`croupier acls`, as admin)",
        principal=who,
    )


def unreachable(settings: Settings, error: BaseException) -> str:
    """What to check when the brokers cannot be reached at all: on a secured listener a client
    without TLS, or without the right CA, gets no answer it can read."""
    hint = (
        "is the broker up (`make kafka-up`, or KAFKA_BOOTSTRAP)?"
        if settings.kafka_security_protocol == "PLAINTEXT"
        else "is the broker up, and does CROUPIER_KAFKA_CA_FILE name the CA of its certificate?"
    )
    return (
        f"cannot reach Kafka at {settings.kafka_bootstrap} as {clients.principal(settings)} "
        f"({error!r}); {hint} A secured listener answers only SASL_SSL clients: set "
        "CROUPIER_KAFKA_SECURITY_PROTOCOL and the login (.data/kafka/clients/<role>.env)"
    )


def partitions(consumer: Any, settings: Settings, topic: str, *, doing: str) -> list[int]:
    """The partitions of a topic a kafka-python consumer may read, sorted; LookupError when the
    topic does not exist, AccessDenied when the brokers will not describe it to this principal
    (kafka-python returns no partitions for both; a second question tells them apart)."""
    from kafka.admin import KafkaAdminClient  # type: ignore[import-untyped]

    found = consumer.partitions_for_topic(topic)
    if found:
        return sorted(found)
    admin = KafkaAdminClient(**clients.kafka_python(settings), client_id="croupier-describe")
    try:
        codes = {meta["name"]: meta.get("error_code", 0) for meta in admin.describe_topics([topic])}
    finally:
        admin.close()
    if codes.get(topic) == TOPIC_AUTHORIZATION_FAILED:
        who = clients.principal(settings)
        raise AccessDenied(
            f"{who} is not allowed to {doing}: the brokers refused Describe and Read on topic "
            f"{topic}; run it with the principal of the role that reads it "
            "(.data/kafka/clients/<role>.env), or have the operator grant it in services/roles.py "
            "and apply it (`croupier acls`, as admin)",
            principal=who,
        )
    raise LookupError(f"topic {topic!r} does not exist at {settings.kafka_bootstrap}")


def reraise(
    error: BaseException, settings: Settings, *, doing: str, resource: str, operation: str
) -> None:
    """Raise the error as AccessDenied when it is a refusal of the brokers; else return, for the
    caller's own handling (a broker not up, a missing topic)."""
    if isinstance(error, AccessDenied):
        raise error
    denied = explain(error, settings, doing=doing, resource=resource, operation=operation)
    if denied is not None:
        raise denied from error
