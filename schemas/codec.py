"""Strict decoding with the contract's reason codes, and the one canonical encoding."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final, Literal

import msgspec

from schemas.events import BET_TYPES, NUL_TEXT, ROUND_TYPES, AnyEvent, BetPlaced, RoundEvent
from schemas.records import Record, Rejected, RejectReason

Topic = Literal["rounds", "bets"]

_ROUNDS: Final = msgspec.json.Decoder(RoundEvent)
_BETS: Final = msgspec.json.Decoder(BetPlaced)
_EVENTS: Final = msgspec.json.Decoder(AnyEvent)
_ANY: Final = msgspec.json.Decoder()
_ENCODER: Final = msgspec.json.Encoder()
_FIELD: Final = re.compile(r"`\$\.([A-Za-z_][A-Za-z0-9_]*)")
_MISSING: Final = re.compile(r"missing required field `([^`]+)`")
NUL: Final = b"\\u0000"
"""How U+0000 (NUL) is written in JSON text, the only way it can be (a raw control character is
malformed JSON): an input without these bytes holds no NUL, whatever its strings."""
ESCAPE: Final = ord("\\")
"""The byte every escape in JSON text begins with, NUL's too. A search for it as an int is one
memchr; a search for a bytes needle first pays for an exception CPython 3.11 raises and clears
(trying the needle as an int), more than the search itself on an input's few hundred bytes."""


def spells_nul(raw: bytes) -> bool:
    """Whether JSON text spells U+0000 (`NUL`); most hold no escape at all (`ESCAPE`)."""
    return ESCAPE in raw and raw.find(NUL) >= 0


class Invalid(msgspec.Struct, frozen=True, kw_only=True):
    """Why an input could not be accepted: a contract reason code and a readable detail."""

    reason: RejectReason
    detail: str


def payload(value: bytes | None) -> bytes:
    """A Kafka record's value as the bytes the decoders take: a record with no value (null, as
    a tombstone has) is an empty message, which is malformed like any input that is not JSON."""
    return b"" if value is None else value


read_event: Final = _EVENTS.decode
"""The fast path of `decode_event`: the event of a valid line, else msgspec.DecodeError. It
does not look for NUL (`nul_field`), which an input must be checked for once, where it enters."""


def nul_field(raw: bytes, event: Any) -> Invalid | None:
    """Why a decoded input is refused after all: a text of it holds U+0000 (NUL), which no
    PostgreSQL text column can store (the read side's, a wallet's); None when none does. Costs a
    byte search unless `raw` spells a NUL (`\\u0000`), which it never does in the common case."""
    if not spells_nul(raw):
        return None
    where = nul_path(event)
    if where is None:  # the six characters only, as in "\\\\u0000" (a backslash, then u0000)
        return None
    return Invalid(
        reason="invalid_field",
        detail=f"{where}: {NUL_TEXT}",
    )


def nul_path(value: Any) -> str | None:
    """Where the first NUL is in a decoded event or record (its fields and indexes, dotted), if
    it holds one."""
    found = _nul_path(msgspec.to_builtins(value), ())
    return None if found is None else ".".join(found)


def _nul_path(value: Any, path: tuple[str, ...]) -> tuple[str, ...] | None:
    match value:
        case str():
            return path if "\x00" in value else None
        case dict():
            for key, item in value.items():
                found = _nul_path(item, (*path, str(key)))
                if found is not None:
                    return found
        case list():
            for n, item in enumerate(value):
                found = _nul_path(item, (*path, str(n)))
                if found is not None:
                    return found
    return None


def encode(record: Record) -> bytes:
    """The canonical JSON of a record: fixed field order, no whitespace, UTF-8."""
    return _ENCODER.encode(record)


def encode_each(records: Sequence[Record]) -> list[bytes]:
    """The canonical JSON of each record (`encode`), all encoded in one call and cut at the
    newlines that end them (JSON text escapes every newline inside its strings)."""
    values = _ENCODER.encode_lines(records).split(b"\n")
    values.pop()
    return values


def encode_lines(records: Sequence[Record]) -> bytes:
    """The canonical JSON of each record, each followed by a newline (JSON Lines)."""
    return _ENCODER.encode_lines(records)


def decode_round(raw: bytes) -> RoundEvent | Invalid:
    """A `rounds` message as a round event, or why it is not one."""
    try:
        event = _ROUNDS.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return diagnose(raw, ROUND_TYPES, "rounds", _ROUNDS)
    return nul_field(raw, event) or event


def decode_bet(raw: bytes) -> BetPlaced | Invalid:
    """A `bets` message as a bet event, or why it is not one."""
    try:
        event = _EVENTS.decode(raw)  # the union insists on `type`; a lone tagged Struct does not
    except (msgspec.DecodeError, RecursionError):
        return diagnose(raw, BET_TYPES, "bets", _BETS)
    if isinstance(event, BetPlaced):
        return nul_field(raw, event) or event
    return diagnose(raw, BET_TYPES, "bets", _BETS)


def decode_event(raw: bytes) -> tuple[Topic, AnyEvent | Invalid]:
    """A message of unknown topic (a replay line): its topic, told by its `type`, and the event.

    A line whose `type` cannot be read is taken to be from `rounds`.
    """
    try:
        event = _EVENTS.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        topic = _topic_of(raw)
        if topic == "bets":
            return topic, diagnose(raw, BET_TYPES, topic, _BETS)
        return topic, diagnose(raw, ROUND_TYPES, topic, _ROUNDS)
    return ("bets" if isinstance(event, BetPlaced) else "rounds"), nul_field(raw, event) or event


def _topic_of(raw: bytes) -> Topic:
    try:
        value = _ANY.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return "rounds"
    kind = value.get("type") if isinstance(value, dict) else None
    return "bets" if isinstance(kind, str) and kind.startswith("bet.") else "rounds"


def diagnose(
    raw: bytes, types: frozenset[str], topic: str, typed: msgspec.json.Decoder[Any]
) -> Invalid:
    """The slow path, taken only for bad input: name the first thing wrong, in contract order."""
    if not raw.strip():
        return Invalid(
            reason="malformed",
            detail="an empty message (no value, or a null one as a tombstone has): expected a "
            "JSON event",
        )
    try:
        value = _ANY.decode(raw)
    except msgspec.DecodeError as error:
        return Invalid(reason="malformed", detail=f"not valid JSON: {error}")
    except RecursionError:
        return Invalid(reason="malformed", detail="JSON nested too deeply")
    if not isinstance(value, dict):
        return Invalid(reason="malformed", detail=f"expected a JSON object, got {_kind(value)}")
    kind = value.get("type")
    if kind is None:
        return Invalid(reason="invalid_field", detail="type: missing required field")
    if not isinstance(kind, str):
        return Invalid(reason="invalid_field", detail=f"type: expected a string, got {_kind(kind)}")
    if kind not in types:
        known = ", ".join(sorted(types))
        return Invalid(
            reason="unknown_type", detail=f"type {kind!r} is not a {topic} event (expected {known})"
        )
    version = value.get("v")
    if version is None:
        return Invalid(reason="invalid_field", detail="v: missing required field")
    if not isinstance(version, int) or isinstance(version, bool):
        return Invalid(
            reason="invalid_field", detail=f"v: expected an integer, got {_kind(version)}"
        )
    if version != 1:
        return Invalid(
            reason="unsupported_version", detail=f"v {version} is not supported (this reads v 1)"
        )
    try:
        event = typed.decode(raw)
    except RecursionError:
        return Invalid(reason="malformed", detail="JSON nested too deeply")
    except msgspec.ValidationError as error:
        return Invalid(reason="invalid_field", detail=_field_detail(str(error)))
    except msgspec.DecodeError as error:  # pragma: no cover - the generic decode accepted it
        return Invalid(reason="malformed", detail=str(error))
    found = nul_field(raw, event)
    if found is not None:
        return found
    return Invalid(
        reason="invalid_field", detail="input did not match its schema"
    )  # pragma: no cover


def rejected(invalid: Invalid, topic: str, raw: bytes) -> Rejected:
    """The dead-letter record of an input, carrying the input exactly as received."""
    return Rejected(v=1, reason=invalid.reason, detail=invalid.detail, topic=topic, raw=text(raw))


def text(raw: bytes) -> str:
    """The input as a string: UTF-8, with any invalid byte shown as a \\xNN escape."""
    return raw.decode("utf-8", errors="backslashreplace")


def _field_detail(message: str) -> str:
    missing = _MISSING.search(message)
    if missing:
        return f"{missing.group(1)}: missing required field"
    path = _FIELD.search(message)
    if path is None:
        if message.startswith("currency:"):
            return "currency: expected an ISO 4217 code of three capital letters, e.g. EUR"
        return f"dice/discs: {message}" if "dice" in message else message
    field = path.group(1)
    if field == "at":
        return "at: expected an RFC 3339 timestamp with a zone, e.g. 2026-11-29T12:00:00Z"
    if field == "currency":
        return "currency: expected an ISO 4217 code of three capital letters, e.g. EUR"
    return f"{field}: {message}"


def _kind(value: object) -> str:
    match value:
        case bool():
            return "a boolean"
        case int():
            return "an integer"
        case float():
            return "a number"
        case str():
            return "a string"
        case list():
            return "an array"
        case dict():
            return "an object"
        case None:
            return "null"
        case _:
            return type(value).__name__
