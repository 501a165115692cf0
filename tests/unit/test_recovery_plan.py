"""How a task starts: restored from whole state, refolded from whole input, or refused."""

from __future__ import annotations

from services.settlement import capture, state
from services.settlement.fold import Fold
from services.settlement.recovery import Blocked, Refold, Restored, plan
from tests.unit.builders import bet, round_event, rounds, run

ZERO = {"rounds": 0, "bets": 0}
NONE: dict[str, int | None] = {"rounds": None, "bets": None}


def _log(rounds_at: int = 3, bets_at: int = 2) -> dict[bytes, bytes]:
    """The state log of a task that folded an open round with two bets."""
    fold = Fold(journal=True)
    run(rounds(round_event("opened", game="sicbo")), fold)
    run([("bets", bet(1)), ("bets", bet(2))], fold)
    entries = [*capture.Layout().changes(fold), state.position_entry(rounds_at, bets_at)]
    return {key: value for key, value in entries if value is not None}


def test_a_task_that_never_ran_folds_its_input_from_offset_zero() -> None:
    start = plan({}, NONE, ZERO, horizon=200)
    assert start == Refold(start=ZERO, upto=ZERO, why=None)


def test_a_task_that_never_ran_over_truncated_input_is_refused() -> None:
    start = plan({}, NONE, {"rounds": 5, "bets": 0}, horizon=200)
    assert isinstance(start, Blocked)
    assert "rounds from offset 5" in start.reason


def test_whole_state_at_the_committed_offsets_is_restored_there() -> None:
    start = plan(_log(), {"rounds": 3, "bets": 2}, {"rounds": 1, "bets": 1}, horizon=200)
    assert isinstance(start, Restored)
    assert start.positions == {"rounds": 3, "bets": 2}
    assert start.fold.pending == 2
    assert start.records == len(_log())


def test_state_whose_group_offsets_expired_resumes_at_its_own_position() -> None:
    start = plan(_log(), NONE, {"rounds": 3, "bets": 2}, horizon=200)
    assert isinstance(start, Restored)
    assert start.positions == {"rounds": 3, "bets": 2}


def test_state_at_other_offsets_than_the_group_committed_is_refolded_when_input_is_whole() -> None:
    start = plan(_log(), {"rounds": 9, "bets": 2}, ZERO, horizon=200)
    assert isinstance(start, Refold)
    assert start.upto == {"rounds": 9, "bets": 2}
    assert start.why is not None and "the group committed rounds 9" in start.why
    assert start.stale == frozenset(_log())


def test_state_behind_the_start_of_truncated_input_is_refused() -> None:
    start = plan(_log(), {"rounds": 3, "bets": 2}, {"rounds": 4, "bets": 0}, horizon=200)
    assert isinstance(start, Blocked)
    assert "rounds starts at offset 4, after the state's position 3" in start.reason


def test_an_operator_may_accept_settling_from_what_truncated_input_kept() -> None:
    start = plan(
        _log(), {"rounds": 3, "bets": 2}, {"rounds": 4, "bets": 0}, horizon=200, partial=True
    )
    assert isinstance(start, Restored)
    assert start.positions == {"rounds": 4, "bets": 2}


def test_unreadable_state_is_refolded_from_whole_input() -> None:
    log = _log()
    log[state.table_key("T1")] = b"{"
    start = plan(log, {"rounds": 3, "bets": 2}, ZERO, horizon=200)
    assert isinstance(start, Refold)
    assert start.start == ZERO and start.upto == {"rounds": 3, "bets": 2}
    assert start.why is not None and start.why.startswith("unreadable state record")


def test_unreadable_state_over_truncated_input_is_refused_and_says_what_to_do() -> None:
    log = _log()
    log[state.table_key("T1")] = b"{"
    start = plan(log, {"rounds": 3, "bets": 2}, {"rounds": 1, "bets": 1}, horizon=200)
    assert isinstance(start, Blocked)
    assert "Restore the state topic from a backup" in start.reason
    assert "CROUPIER_PARTIAL_HISTORY=true" in start.reason


def test_state_records_without_the_position_record_are_not_trusted() -> None:
    log = _log()
    del log[state.TASK_KEY]
    start = plan(log, {"rounds": 3, "bets": 2}, ZERO, horizon=200)
    assert isinstance(start, Refold)
    assert start.why is not None and "without the task's position record" in start.why


def test_a_position_of_an_unknown_version_is_not_trusted() -> None:
    log = _log()
    log[state.TASK_KEY] = log[state.TASK_KEY].replace(b'"v":1', b'"v":7')
    start = plan(log, NONE, {"rounds": 2, "bets": 0}, horizon=200)
    assert isinstance(start, Blocked)
    assert "format version 7" in start.reason


def test_no_state_though_the_group_committed_is_refolded_when_input_is_whole() -> None:
    start = plan({}, {"rounds": 3, "bets": 2}, ZERO, horizon=200)
    assert isinstance(start, Refold)
    assert start.upto == {"rounds": 3, "bets": 2}
    assert start.why is not None and "holds no state for this task" in start.why


def test_durable_state_off_refolds_whole_input_and_refuses_truncated_input() -> None:
    assert plan(None, {"rounds": 3, "bets": 2}, ZERO, horizon=200) == Refold(
        start=ZERO, upto={"rounds": 3, "bets": 2}, why="durable state is off"
    )
    refused = plan(None, {"rounds": 3, "bets": 2}, {"rounds": 0, "bets": 1}, horizon=200)
    assert isinstance(refused, Blocked)
    assert refused.reason.startswith("durable state is off")
