"""What the projector does with the errors librdkafka returns: it reads on past those it rides
out, and stops on a refusal or a fatal error, saying what to do."""

from __future__ import annotations

import logging

import pytest
from confluent_kafka import KafkaError, KafkaException
from sqlalchemy import create_engine

from services.history.projector import Projector
from services.history.store import Store
from services.security.denied import AccessDenied
from services.settings import Settings

ACCEPTED = ("accepted", 0)


class Failure:
    """A message that carries an error, of a partition or (no topic) of the client."""

    def __init__(self, error: KafkaError, at: tuple[str | None, int] = ACCEPTED) -> None:
        self._error, self.at = error, at

    def error(self) -> KafkaError:
        return self._error

    def topic(self) -> str | None:
        return self.at[0]

    def partition(self) -> int:
        return self.at[1]


def projector() -> Projector:
    p = Projector(Settings(), Store(create_engine("sqlite://")))
    p.clocks = {ACCEPTED: None}
    p.reached = {ACCEPTED: 0}
    return p


def test_a_partition_s_transient_error_is_told_and_reading_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    p = projector()
    gone = KafkaError(KafkaError.NOT_LEADER_FOR_PARTITION, "leader moved")
    with caplog.at_level(logging.WARNING, "croupier.projector"):
        assert p._take([Failure(gone)]) == 0
    assert "reading accepted[0]" in caplog.text and "leader moved" in caplog.text
    assert p.reached == {ACCEPTED: 0}


def test_the_refused_lookup_of_the_unused_group_is_no_refusal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    p = projector()
    group = KafkaError(KafkaError.GROUP_AUTHORIZATION_FAILED, "FindCoordinator response error")
    with caplog.at_level(logging.INFO, "croupier.projector"):
        assert p._take([Failure(group, (None, -1))]) == 0
    assert "never uses" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_topic_refused_stops_the_projector_naming_the_principal() -> None:
    refused = KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed")
    with pytest.raises(AccessDenied, match="not allowed to project the read side"):
        projector()._take([Failure(refused)])


def test_a_fatal_error_stops_the_projector_saying_it_resumes_from_the_database(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fatal = KafkaError(KafkaError._FATAL, "fenced", fatal=True)
    with caplog.at_level(logging.CRITICAL, "croupier.projector"), pytest.raises(KafkaException):
        projector()._take([Failure(fatal, (None, -1))])
    assert "failed for good" in caplog.text and "resumes there" in caplog.text


def test_the_client_s_errors_are_told_once_an_outage_and_a_fatal_one_stops_the_next_read(
    caplog: pytest.LogCaptureFixture,
) -> None:
    p = projector()
    with caplog.at_level(logging.WARNING, "croupier.projector"):
        for after in ("0ms", "1ms", "0ms"):
            p._error(KafkaError(KafkaError._TRANSPORT, f"broker down (after {after})"))
        p._error(KafkaError(KafkaError._ALL_BROKERS_DOWN, "1/1 brokers are down"))
        assert p._take([]) == 0
    assert caplog.text.count("broker down") == 1 and caplog.text.count("brokers are down") == 1
    p._error(KafkaError(KafkaError._FATAL, "fatal", fatal=True))
    with pytest.raises(KafkaException):
        p._take([])
