"""Events in: what the tables' game services publish to `rounds` and `bets` (docs/CONTRACT.md
section 3)."""

from __future__ import annotations

import re
from datetime import date, datetime
from itertools import product
from string import ascii_uppercase
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

import msgspec

RFC3339: Final = (
    r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt ]([01][0-9]|2[0-3]):[0-5][0-9]:"
    r"([0-5][0-9]|60)(\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])\Z"
)

NO_NUL: Final = {"pattern": r"^[^\u0000]*$"}
"""What a text of an event may not hold, for the JSON Schemas: U+0000 (NUL). The decoders check it
with a byte search where an input enters (schemas.codec.nul_field), not with this pattern."""
NUL_TEXT: Final = "contains U+0000 (NUL), which no text of an event may hold"
"""Why a text holding U+0000 (NUL) is refused, after the field's name."""
Id = Annotated[str, msgspec.Meta(min_length=1, max_length=256, extra_json_schema=NO_NUL)]
Timestamp = Annotated[str, msgspec.Meta(pattern=RFC3339)]
Instant = Annotated[datetime, msgspec.Meta(tz=True)]
Version = Literal[1]
GameName = Literal["sicbo", "thai-hilo", "xocdia"]
Face = Annotated[int, msgspec.Meta(ge=1, le=6)]
Disc = Literal["red", "white"]
Dice = tuple[Face, Face, Face]
Discs = tuple[Disc, Disc, Disc, Disc]
Phase = Literal["unopened", "open", "closed", "result", "cancelled", "voided"]
"""Where a round is in its life cycle, as its events move it (docs/CONTRACT.md
sections 4 and 5)."""
Stake = Annotated[int, msgspec.Meta(ge=1, le=2**53 - 1)]
SEQ_MAX: Final = 2**31 - 1
"""The largest `seq` and `last_seq`: what a 32-bit signed integer holds, most databases' INTEGER
(the read side's among them); far beyond any round's count of bets."""
if TYPE_CHECKING:
    Currency = str
else:  # every three-capital-letter code, checked by msgspec in C (a pattern costs 1 us a bet)
    Currency = Literal[tuple(map("".join, product(ascii_uppercase, repeat=3)))]
Reason = Annotated[str, msgspec.Meta(max_length=4096, extra_json_schema=NO_NUL)]
UNPRINTABLE: Final = (
    r"\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f"
    r"\ufeff\ufff9-\ufffb"
)
"""What a staff or equipment id may not hold (docs/DECISIONS.md, "Dealer and shaker ids"): the
control characters, the line and paragraph separators, and the invisible formatting characters
(soft hyphen, zero-width spaces and joiners, direction marks and overrides, word joiner and
invisible operators, byte order mark, interlinear annotation). A fixed set, so that every version
of croupier and every language's JSON Schema validator agree on what is printable."""
_UNPRINTABLE: Final = re.compile(f"[{UNPRINTABLE}]")
StaffId = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=64,
        extra_json_schema={
            "pattern": f"^[^{UNPRINTABLE}]*$",
            "description": "1 to 64 printable characters: no control, line or paragraph "
            "separator, or invisible formatting character (docs/CONTRACT.md#round-events-topic-"
            "rounds, contract 1.2).",
        },
    ),
]
"""`dealer_id`, `shaker_id` (contract 1.2): who dealt the round, and with which shaker."""
Signature = Annotated[
    Any,
    msgspec.Meta(
        extra_json_schema={
            "description": "The table's Ed25519 signature of the event, base64url without padding "
            "(86 characters), docs/CONTRACT.md#signed-round-events. Checked only for a table "
            "croupier has public keys for, where a missing or wrong one is rejected "
            "`bad_signature`; any value is ignored for other tables."
        }
    ),
]
"""`sig`: read whatever its JSON type, so that a table without keys reads as before."""


class Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", gc=False):
    """Fields every event has (and `at`, kept verbatim by round events)."""

    v: Version
    event_id: Id
    table_id: Id
    round_id: Id


class RoundEventBase(Event, frozen=True, kw_only=True):
    """A round event; its `at` is copied verbatim into the records it decides."""

    at: Timestamp

    def __post_init__(self) -> None:
        _calendar_date(self.at)


class RoundOpened(
    RoundEventBase, frozen=True, kw_only=True, tag="round.opened", omit_defaults=True
):
    """The betting period of a round starts; optionally (contract 1.2) with the dealer on duty
    and the shaker (bowl or dice set) in use, the scopes of the outcome integrity tests."""

    game: GameName
    dealer_id: StaffId | None = None
    shaker_id: StaffId | None = None

    def __post_init__(self) -> None:
        _calendar_date(self.at)
        check_staff(self.dealer_id, self.shaker_id)


class BettingClosed(RoundEventBase, frozen=True, kw_only=True, tag="round.betting_closed"):
    """The betting period is over; the table confirmed the bets with seq 1..last_seq."""

    last_seq: Annotated[int, msgspec.Meta(ge=0, le=SEQ_MAX)]


class RoundSuspended(RoundEventBase, frozen=True, kw_only=True, tag="round.suspended"):
    """An unexpected problem; the dealer informs the supervisor."""

    reason: Reason


class RoundResumed(RoundEventBase, frozen=True, kw_only=True, tag="round.resumed"):
    """The problem was solved quickly; the round goes on from where it was."""


class RoundReshaken(RoundEventBase, frozen=True, kw_only=True, tag="round.reshaken"):
    """The dice or discs were shaken again; bets stand."""

    reason: Reason


class RoundResult(
    RoundEventBase, frozen=True, kw_only=True, tag="round.result", omit_defaults=True
):
    """The outcome the dealer entered: dice for sicbo and thai-hilo, discs for xocdia."""

    dice: Dice | None = None
    discs: Discs | None = None
    sig: Signature = None

    def __post_init__(self) -> None:
        _calendar_date(self.at)
        if (self.dice is None) == (self.discs is None):
            raise ValueError("a result carries exactly one of `dice` (3 faces) or `discs` (4)")


class RoundCancelled(
    RoundEventBase, frozen=True, kw_only=True, tag="round.cancelled", omit_defaults=True
):
    """The round is void: every confirmed bet is refunded."""

    reason: Reason
    sig: Signature = None


class RoundCorrected(
    RoundEventBase, frozen=True, kw_only=True, tag="round.corrected", omit_defaults=True
):
    """After a result: the dealer's entry was wrong; the round's outcome becomes this one."""

    dice: Dice | None = None
    discs: Discs | None = None
    reason: Reason
    authorized_by: Id
    sig: Signature = None

    def __post_init__(self) -> None:
        _calendar_date(self.at)
        if (self.dice is None) == (self.discs is None):
            raise ValueError("a correction carries exactly one of `dice` (3 faces) or `discs` (4)")


class RoundVoided(
    RoundEventBase, frozen=True, kw_only=True, tag="round.voided", omit_defaults=True
):
    """After a result: the round is void; every settled bet ends with its stake back."""

    reason: Reason
    authorized_by: Id
    sig: Signature = None


class BetPlaced(Event, frozen=True, kw_only=True, tag="bet.placed"):
    """A bet the table confirmed: its stake is already taken from the wallet."""

    at: Instant
    bet_id: Id
    player_id: Id
    seq: Annotated[int, msgspec.Meta(ge=1, le=SEQ_MAX)]
    kind: Annotated[str, msgspec.Meta(max_length=64, extra_json_schema=NO_NUL)]
    pick: tuple[int, ...] = ()
    stake: Stake
    currency: Currency


RoundEvent = (
    RoundOpened
    | BettingClosed
    | RoundSuspended
    | RoundResumed
    | RoundReshaken
    | RoundResult
    | RoundCancelled
    | RoundCorrected
    | RoundVoided
)
BetEvent = BetPlaced
AnyEvent = RoundEvent | BetEvent
SignedEvent = RoundResult | RoundCorrected | RoundVoided | RoundCancelled
"""The round events that move money, which a table with keys must sign (docs/CONTRACT.md,
Signed round events)."""
SIGNED: Final = (RoundResult, RoundCorrected, RoundVoided, RoundCancelled)

ROUND_TYPES: Final[frozenset[str]] = frozenset(
    str(t.__struct_config__.tag)
    for t in (
        RoundOpened,
        BettingClosed,
        RoundSuspended,
        RoundResumed,
        RoundReshaken,
        RoundResult,
        RoundCancelled,
        RoundCorrected,
        RoundVoided,
    )
)
BET_TYPES: Final = frozenset({"bet.placed"})


def _calendar_date(at: str) -> None:
    """The pattern checks the shape of `at`; this checks the day exists (no 31 February)."""
    if at[8:10] <= "28":  # every month has its first 28 days
        return
    try:
        date(int(at[0:4]), int(at[5:7]), int(at[8:10]))
    except ValueError:
        raise ValueError(f"at: {at[:10]!r} is not a calendar date") from None


def check_staff(dealer_id: str | None, shaker_id: str | None) -> None:
    """Raise ValueError naming the first of `dealer_id` and `shaker_id` that is given but not 1
    to 64 printable characters. (Decoding checks the length before, in msgspec's own words; a
    Struct built in Python is checked for it here.)"""
    for name, value in (("dealer_id", dealer_id), ("shaker_id", shaker_id)):
        if value is None:
            continue
        if "\x00" in value:  # as any text of an event: named the same way (codec.nul_field)
            raise ValueError(f"{name}: {NUL_TEXT}")
        if not 1 <= len(value) <= 64:
            raise ValueError(f"{name}: expected 1 to 64 printable characters, got {len(value)}")
        found = _UNPRINTABLE.search(value)
        if found is not None:
            raise ValueError(
                f"{name}: expected 1 to 64 printable characters, found "
                f"U+{ord(found.group()):04X} at character {found.start() + 1} (a control, "
                "separator or invisible formatting character)"
            )


def type_of(event: Event) -> str:
    """The `type` an event was published with."""
    tag = event.__struct_config__.tag
    assert isinstance(tag, str)
    return tag
