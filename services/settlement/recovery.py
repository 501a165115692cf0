"""How a task starts: restored from its state, refolded from its input, or blocked (pure).

A task's state is only ever used whole and as the fold of exactly the input below its position.
Anything else (no state, an unreadable record, an unknown version, a position other than the one
its group committed) is refolded from the input if the input still starts at offset 0, and is
otherwise refused: folding a history whose start was deleted as if it were whole would decide its
rounds wrongly (docs/DECISIONS.md, "Recovery").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from services.settlement import rebuild, state
from services.settlement.fold import Fold
from services.settlement.state import StateError
from services.signing.signature import NO_KEYS, TableKeys

ROLES: Final = ("rounds", "bets")
Offsets = dict[str, int]
"""An offset per input role (`rounds`, `bets`) of one task."""


@dataclass(frozen=True, kw_only=True)
class Restored:
    """The state was whole: the task resumes folding at `positions`."""

    fold: Fold
    positions: Offsets
    records: int
    size: int


@dataclass(frozen=True, kw_only=True)
class Refold:
    """Fold the input from `start` up to `upto` (records discarded), then write the whole state."""

    start: Offsets
    upto: Offsets
    why: str | None
    stale: frozenset[bytes] = field(default_factory=frozenset)


@dataclass(frozen=True, kw_only=True)
class Blocked:
    """The task cannot start without losing or inventing history; `reason` says what to do."""

    reason: str


Start = Restored | Refold | Blocked


def plan(
    log: Mapping[bytes, bytes] | None,
    committed: Mapping[str, int | None],
    beginnings: Mapping[str, int],
    *,
    horizon: int,
    partial: bool = False,
    state_topic: str = "the state topic",
    keys: TableKeys = NO_KEYS,
) -> Start:
    """How to start a task from its state log (None: durable state is off) and its input.

    `committed` are the offsets its consumer group committed (None where none), `beginnings` the
    first offsets its input partitions still hold; `partial` lets an operator settle from what is
    left of a truncated input, knowing what that loses.
    """
    stale = frozenset(log or ())
    if log is None:
        why = "durable state is off"
    elif not log and all(committed[role] is None for role in ROLES):
        why = None  # a task that never committed anything
    elif not log:
        why = f"{state_topic} holds no state for this task, though its group committed offsets"
    else:
        found = _restore(log, committed, beginnings, horizon, partial, keys)
        if not isinstance(found, str):
            return found
        why = found
    upto = {role: committed[role] or 0 for role in ROLES}
    if all(beginnings[role] == 0 for role in ROLES):
        return Refold(start=dict.fromkeys(ROLES, 0), upto=upto, why=why, stale=stale)
    kept = ", ".join(f"{role} from offset {beginnings[role]}" for role in ROLES)
    if partial:
        start = dict(beginnings)
        upto = {role: max(upto[role], start[role]) for role in ROLES}
        return Refold(
            start=start, upto=upto, why=f"{why or 'no state'}; partial history", stale=stale
        )
    return Blocked(
        reason=f"{why or 'no state and no committed offsets'}, and the input was truncated "
        f"({kept}), so it cannot be refolded. Restore the state topic from a backup, or accept "
        "settling from the oldest input kept with CROUPIER_PARTIAL_HISTORY=true (bets of rounds "
        "opened before it stay pending, and `croupier verify` reports them)"
    )


def _restore(
    log: Mapping[bytes, bytes],
    committed: Mapping[str, int | None],
    beginnings: Mapping[str, int],
    horizon: int,
    partial: bool,
    keys: TableKeys,
) -> Restored | Blocked | str:
    """The restored task, a refusal, or why the state cannot be used."""
    raw = log.get(state.TASK_KEY)
    if raw is None:
        return f"{len(log)} state records without the task's position record"
    try:
        position = state.read_position(raw)
        entries = {key: value for key, value in log.items() if key != state.TASK_KEY}
        fold = rebuild.fold_of(entries, horizon, keys=keys)
    except StateError as error:
        return str(error)
    at = {"rounds": position.rounds, "bets": position.bets}
    differ = [r for r in ROLES if committed[r] is not None and committed[r] != at[r]]
    if differ:
        return (
            "the state is the fold of "
            + ", ".join(f"{r} below {at[r]}" for r in ROLES)
            + " but the group committed "
            + ", ".join(f"{r} {committed[r]}" for r in ROLES)
        )
    lost = [r for r in ROLES if at[r] < beginnings[r]]
    if lost and partial:
        at = {r: max(at[r], beginnings[r]) for r in ROLES}
    elif lost:
        return Blocked(
            reason=", ".join(
                f"{r} starts at offset {beginnings[r]}, after the state's position {at[r]}"
                for r in lost
            )
            + ": input was deleted before it was folded. Settle those events from a backup of "
            "the input, or accept losing them with CROUPIER_PARTIAL_HISTORY=true"
        )
    size = sum(len(key) + len(value) for key, value in log.items())
    return Restored(fold=fold, positions=at, records=len(log), size=size)
