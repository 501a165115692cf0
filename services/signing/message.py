"""The bytes a table signs for a money-moving round event (contract section 8); pure."""

from __future__ import annotations

from typing import Final, assert_never

from schemas.events import (
    Dice,
    Discs,
    RoundCancelled,
    RoundCorrected,
    RoundResult,
    RoundVoided,
    SignedEvent,
    type_of,
)

_DISC: Final = {"red": "R", "white": "W"}


def message(event: SignedEvent) -> bytes:
    """`type`, `v`, `event_id`, `table_id`, `round_id`, `at`, the outcome, `reason` and
    `authorized_by`, joined by line feeds, as UTF-8; a value the event has not is empty.

    Each value is the one the event's JSON denotes: strings as decoded (escapes resolved, `at`
    character for character), `v` in decimal, dice as their digits joined by `-` in the event's
    order (`6-5-1`), discs as `R`/`W` in order (`RWWR`).
    """
    match event:
        case RoundResult(dice=dice, discs=discs):
            outcome, reason, authorized_by = _outcome(dice, discs), "", ""
        case RoundCorrected(dice=dice, discs=discs):
            outcome, reason, authorized_by = (
                _outcome(dice, discs),
                event.reason,
                event.authorized_by,
            )
        case RoundVoided():
            outcome, reason, authorized_by = "", event.reason, event.authorized_by
        case RoundCancelled():
            outcome, reason, authorized_by = "", event.reason, ""
        case _:
            assert_never(event)
    values = (
        type_of(event),
        str(event.v),
        event.event_id,
        event.table_id,
        event.round_id,
        event.at,
        outcome,
        reason,
        authorized_by,
    )
    return "\n".join(values).encode()


def _outcome(dice: Dice | None, discs: Discs | None) -> str:
    if dice is not None:
        return "-".join(map(str, dice))
    if discs is not None:
        return "".join(_DISC[disc] for disc in discs)
    return ""
