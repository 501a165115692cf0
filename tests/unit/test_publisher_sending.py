"""The publisher validates before sending, routes and keys by table, re-sends unknown outcomes."""

from __future__ import annotations

import itertools
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
from kafka.errors import (  # type: ignore[import-untyped]
    KafkaConnectionError,
    KafkaTimeoutError,
    MessageSizeTooLargeError,
)

from schemas.codec import encode
from services.publisher import InvalidEvent, Publisher, PublishError, Table, prepare
from services.settlement.fold import Fold

START = datetime(2026, 3, 1, 20, 0, tzinfo=UTC)


class FakeFuture:
    def __init__(self, error: Exception | None) -> None:
        self.error = error

    def get(self, timeout: float | None = None) -> Any:
        if self.error is not None:
            raise self.error
        return None


class FakeProducer:
    """A partition log per topic. `trouble` maps an event's bytes to how its first send ends:
    `landed` (written, but the answer was lost), `lost` (not written: nor is anything of the
    same key sent after it until it is sent again, as an idempotent producer's sequence numbers
    ensure) or `refused` (a definite error)."""

    def __init__(self, trouble: dict[bytes, str] | None = None) -> None:
        self.trouble = dict(trouble or {})
        self.attempts: list[tuple[str, bytes, bytes]] = []
        self.log: list[tuple[str, bytes, bytes]] = []
        self.broken: set[bytes] = set()
        self.closed = False

    def send(self, topic: str, value: bytes, key: bytes) -> FakeFuture:
        self.attempts.append((topic, key, value))
        fate = self.trouble.pop(value, None)
        if fate == "refused":
            return FakeFuture(MessageSizeTooLargeError())
        if fate == "lost" or (key in self.broken and fate is None and not self._again(value)):
            self.broken.add(key)
            return FakeFuture(KafkaConnectionError())
        self.broken.discard(key)
        self.log.append((topic, key, value))
        return FakeFuture(KafkaTimeoutError() if fate == "landed" else None)

    def _again(self, value: bytes) -> bool:
        return sum(1 for a in self.attempts if a[2] == value) > 1

    def flush(self, timeout: float | None = None) -> None:
        pass

    def close(self, timeout: float | None = None) -> None:
        self.closed = True


def publisher(producer: FakeProducer, attempts: int = 5) -> Publisher:
    return Publisher(producer, rounds="r", bets="b", attempts=attempts, backoff=lambda _: None)


def round_of(table_id: str, bets: int = 2) -> list[bytes]:
    table = Table(table_id=table_id, game="sicbo", clock=lambda: START)
    rnd = table.next_round()
    events = [rnd.open()]
    events += [
        rnd.bet(player_id=f"P{n}", kind="big", stake=10, currency="EUR") for n in range(bets)
    ]
    events += [rnd.close(), rnd.result(dice=(4, 5, 6))]
    return [msgspec.json.encode(e) for e in events]


def test_round_events_go_to_rounds_and_bets_to_bets_keyed_by_table() -> None:
    producer = FakeProducer()
    with publisher(producer) as p:
        for raw in round_of("SB-07"):
            p.publish(raw)
    assert [(t, k) for t, k, _ in producer.log] == [
        ("r", b"SB-07"),
        ("b", b"SB-07"),
        ("b", b"SB-07"),
        ("r", b"SB-07"),
        ("r", b"SB-07"),
    ]
    assert producer.closed
    assert p.counts == Counter({"rounds": 3, "bets": 2})


def test_a_struct_is_sent_as_its_canonical_json() -> None:
    producer = FakeProducer()
    table = Table(table_id="HL-01", game="thai-hilo", clock=lambda: START)
    opened = table.next_round().open()
    with publisher(producer) as p:
        p.publish(opened)
    assert producer.log == [("r", b"HL-01", msgspec.json.encode(opened))]


@pytest.mark.parametrize(
    ("raw", "reason", "named"),
    [
        (b"{not json", "malformed", "not valid JSON"),
        (b'{"type":"round.exploded","v":1}', "unknown_type", "round.exploded"),
        (b'{"type":"round.opened","v":2}', "unsupported_version", "v 2"),
        (
            b'{"type":"bet.placed","v":1,"event_id":"e","table_id":"t","round_id":"r",'
            b'"at":"2026-01-01T00:00:00Z","bet_id":"b","player_id":"p","seq":1,"kind":"big",'
            b'"stake":0,"currency":"EUR"}',
            "invalid_field",
            "stake",
        ),
        (
            b'{"type":"round.opened","v":1,"event_id":"e","table_id":"t","round_id":"r",'
            b'"at":"2026-01-01T00:00:00Z"}',
            "invalid_field",
            "game",
        ),
    ],
)
def test_an_invalid_event_raises_naming_the_reason_and_field_and_is_never_sent(
    raw: bytes, reason: str, named: str
) -> None:
    producer = FakeProducer()
    p = publisher(producer)
    with pytest.raises(InvalidEvent, match=named) as caught:
        p.publish(raw)
    assert caught.value.reason == reason
    assert str(caught.value).startswith(f"invalid event ({reason}): ")
    p.close()
    assert producer.attempts == []


def test_a_send_that_timed_out_is_sent_again_with_the_same_bytes() -> None:
    events = round_of("SB-01")
    producer = FakeProducer({events[1]: "landed"})
    with publisher(producer) as p:
        for raw in events:
            p.publish(raw)
    sent = [v for _, _, v in producer.attempts]
    assert sent.count(events[1]) == 2
    assert p.counts["retried"] >= 1
    assert prepare(events[1]).event_id == prepare(sent[-1 - sent[::-1].index(events[1])]).event_id


@pytest.mark.parametrize("fate", ["landed", "lost"])
def test_whatever_became_of_a_retried_send_the_fold_writes_what_it_would_have(fate: str) -> None:
    a, b = round_of("SB-01", bets=3), round_of("XD-02", bets=2)
    interleaved = [x for pair in itertools.zip_longest(a, b) for x in pair if x]
    producer = FakeProducer({a[0]: fate, a[2]: fate, b[1]: fate})
    with publisher(producer) as p:
        for raw in interleaved:
            p.publish(raw)
    expected, got = Fold(), Fold()
    want = Counter(encode(r) for raw in interleaved for r in expected.feed(prepare(raw).topic, raw))
    have = Counter(
        encode(r)
        for t, _, raw in producer.log
        for r in got.feed("rounds" if t == "r" else "bets", raw)
    )
    assert have == want
    assert got.pending == 0


def test_a_refused_event_stops_publishing_with_what_to_do() -> None:
    events = round_of("SB-01")
    producer = FakeProducer({events[0]: "refused"})
    p = publisher(producer)
    p.publish(events[0])
    with pytest.raises(PublishError, match="refused by Kafka"):
        p.flush()


def test_a_broker_that_never_answers_ends_in_an_error_that_says_resending_is_safe() -> None:
    events = round_of("SB-01")

    class Down(FakeProducer):
        def send(self, topic: str, value: bytes, key: bytes) -> FakeFuture:
            self.attempts.append((topic, key, value))
            return FakeFuture(KafkaTimeoutError())

    producer = Down()
    p = publisher(producer, attempts=3)
    p.publish(events[0])
    with pytest.raises(PublishError, match=r"after 3 attempts.*safe"):
        p.flush()
    assert [v for _, _, v in producer.attempts] == [events[0]] * 3
