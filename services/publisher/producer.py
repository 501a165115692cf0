"""The publisher: validated events to `rounds` and `bets`, keyed by table, idempotent, acks=all.

A send whose outcome is unknown (timeout, lost connection) is sent again with the very same bytes:
croupier's fold treats the copy as a redelivery (same event_id, same bet). To keep each table's
order, the failed event is re-sent together with every later event of its table that was sent
after it (those already in the log become redeliveries too).
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kafka import KafkaProducer  # type: ignore[import-untyped]
from kafka.errors import KafkaError, KafkaTimeoutError  # type: ignore[import-untyped]

from schemas.events import AnyEvent
from services.publisher.message import Message, Signers, prepare
from services.security import clients
from services.security.denied import reraise
from services.security.login import check
from services.settings import Settings


class Pending(Protocol):
    """The future of one send (kafka-python's FutureRecordMetadata)."""

    def get(self, timeout: float | None = None) -> Any: ...


class Producer(Protocol):
    """What the publisher needs of a producer (kafka-python's KafkaProducer has it)."""

    def send(self, topic: str, value: bytes, key: bytes) -> Pending: ...

    def flush(self, timeout: float | None = None) -> None: ...

    def close(self, timeout: float | None = None) -> None: ...


class PublishError(RuntimeError):
    """Events could not be written: what failed, and what to do next."""


@dataclass(slots=True)
class _InFlight:
    message: Message
    future: Pending
    attempt: int


def connect(settings: Settings, **config: Any) -> Producer:
    """An idempotent kafka-python producer with acks=all (each partition keeps its order), once
    the brokers accepted the login (a refused one is AccessDenied at once)."""
    check(settings)
    options: dict[str, Any] = {
        **clients.kafka_python(settings),
        "acks": "all",
        "enable_idempotence": True,
        "linger_ms": 5,
        "delivery_timeout_ms": 30_000,
        "request_timeout_ms": 10_000,
        "max_block_ms": 30_000,
        "client_id": "croupier-publisher",
        **config,
    }
    producer: Producer = KafkaProducer(**options)
    return producer


class Publisher:
    """Validate, route (round events to rounds, bets to bets) and send, keyed by table_id."""

    def __init__(
        self,
        producer: Producer,
        *,
        rounds: str,
        bets: str,
        attempts: int = 5,
        window: int = 20_000,
        wait: float = 60.0,
        backoff: Callable[[int], None] = lambda attempt: time.sleep(min(0.2 * 2**attempt, 5.0)),
        settings: Settings | None = None,
        signers: Signers | None = None,
    ) -> None:
        """`signers`: the private key of each table whose money-moving round events it signs."""
        self.producer = producer
        self.settings = settings
        """Given, a refusal of the brokers is raised as AccessDenied naming the principal."""
        self.signers = signers
        self.topics = {"rounds": rounds, "bets": bets}
        self.attempts = attempts
        self.window = window
        self.wait = wait
        self.backoff = backoff
        self.counts: Counter[str] = Counter()
        self._in_flight: deque[_InFlight] = deque()

    @classmethod
    def from_settings(cls, settings: Settings, **options: Any) -> Publisher:
        """A publisher to the topics of the settings, on a new idempotent producer."""
        return cls(
            connect(settings),
            rounds=settings.topic_rounds,
            bets=settings.topic_bets,
            settings=settings,
            **options,
        )

    def publish(self, event: AnyEvent | bytes) -> Message:
        """Validate and send one event; raises InvalidEvent (nothing sent) when it is not valid."""
        message = prepare(event, self.signers)
        self._send(message, attempt=1)
        self.counts[message.topic] += 1
        if len(self._in_flight) >= self.window:
            self._settle(keep=self.window // 2)
        return message

    def flush(self) -> None:
        """Wait until every event sent so far is acknowledged; PublishError when some cannot be."""
        # on a timeout the futures tell which sends are still unknown; they are retried below
        with contextlib.suppress(KafkaTimeoutError):
            self.producer.flush(timeout=self.wait)
        self._settle(keep=0)

    def close(self) -> None:
        """Flush, then release the producer."""
        try:
            self.flush()
        finally:
            self.producer.close(timeout=10)

    def __enter__(self) -> Publisher:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.close()
        else:
            self.producer.close(timeout=10)

    def _send(self, message: Message, attempt: int) -> None:
        future = self.producer.send(
            self.topics[message.topic], value=message.value, key=message.key
        )
        self._in_flight.append(_InFlight(message, future, attempt))

    def _settle(self, keep: int) -> None:
        """Wait for the oldest sends until `keep` are left; re-send those of unknown outcome."""
        while len(self._in_flight) > keep:
            head = self._in_flight[0]
            try:
                head.future.get(timeout=self.wait)
            except (KafkaTimeoutError, KafkaError) as error:
                if not _unknown_outcome(error):
                    if self.settings is not None:
                        topic = self.topics[head.message.topic]
                        reraise(
                            error,
                            self.settings,
                            doing=f"publish event {head.message.event_id} to {topic}",
                            resource=f"topic {topic}",
                            operation="Write",
                        )
                    raise PublishError(
                        f"event {head.message.event_id} was refused by Kafka: {error!r}; "
                        "check the topic exists (croupier topics) and the event size"
                    ) from error
                self._retry(error)
                continue
            self._in_flight.popleft()

    def _retry(self, error: BaseException) -> None:
        """Re-send the head, and every later event of its table, with the same bytes."""
        head = self._in_flight[0]
        if head.attempt >= self.attempts:
            raise PublishError(
                f"event {head.message.event_id} of table {head.message.key.decode()!r} not "
                f"acknowledged after {head.attempt} attempts ({error!r}); is Kafka up? Publishing "
                "the same events again is safe: croupier ignores redeliveries"
            ) from error
        self.backoff(head.attempt)
        key = head.message.key
        again = [f for f in self._in_flight if f.message.key == key]
        others = [f for f in self._in_flight if f.message.key != key]
        self._in_flight = deque(others)
        self.counts["retried"] += len(again)
        # the earlier futures of this table are dropped: their copies may or may not be in the log
        for flight in again:
            self._send(flight.message, attempt=flight.attempt + 1)


def _unknown_outcome(error: BaseException) -> bool:
    """Whether the event may or may not be in the log: a timeout or a retriable error."""
    return isinstance(error, KafkaTimeoutError) or bool(getattr(error, "retriable", False))
