"""`committed_lag` rides out a young broker's missing group coordinator, and nothing else."""

from __future__ import annotations

import itertools

import pytest
from kafka.errors import (  # type: ignore[import-untyped]
    CoordinatorNotAvailableError,
    TopicAuthorizationFailedError,
)

from services.audit import reader
from services.settings import Settings


def test_a_coordinator_not_yet_available_is_asked_again_until_it_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answers: list[int | Exception] = [
        CoordinatorNotAvailableError(),
        CoordinatorNotAvailableError(),
        7,
    ]

    def lag(settings: Settings, group: str, topics: list[str]) -> int:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(reader, "_committed_lag", lag)
    monkeypatch.setattr(reader.time, "sleep", lambda _: None)
    assert reader.committed_lag(Settings(kafka_bootstrap="127.0.0.1:1"), "g", ["bets"]) == 7
    assert answers == []


def test_an_error_that_is_not_retriable_is_raised_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = 0

    def lag(settings: Settings, group: str, topics: list[str]) -> int:
        nonlocal calls
        calls += 1
        raise TopicAuthorizationFailedError()

    monkeypatch.setattr(reader, "_committed_lag", lag)
    with pytest.raises(TopicAuthorizationFailedError):
        reader.committed_lag(Settings(kafka_bootstrap="127.0.0.1:1"), "g", ["bets"])
    assert calls == 1


def test_a_coordinator_that_never_comes_fails_after_the_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def lag(settings: Settings, group: str, topics: list[str]) -> int:
        raise CoordinatorNotAvailableError()

    clock = itertools.count(0, 10)
    monkeypatch.setattr(reader, "_committed_lag", lag)
    monkeypatch.setattr(reader.time, "sleep", lambda _: None)
    monkeypatch.setattr(reader.time, "monotonic", lambda: float(next(clock)))
    with pytest.raises(CoordinatorNotAvailableError):
        reader.committed_lag(Settings(kafka_bootstrap="127.0.0.1:1"), "g", ["bets"], wait=30.0)
