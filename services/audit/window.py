"""What an audit can check when topics no longer start at offset 0 (pure: no broker, no clock).

Retention or `delete_records` removes the head of a partition. The fold of what is left is not
the fold of the whole history, so the audit judges a record only where the window it read holds
everything that record depends on (docs/DECISIONS.md, "Verifying a window"):

- a round of table T (input partition p) can be checked when its `round.opened` is in the kept
  part of rounds[p] (then so is every later event of it: a partition loses a prefix), and, when
  bets[p] lost records, when it opened at least two rounds after the round of some kept bet of T
  (a table publishes every bet of round k, repeats and late bets included, before any bet of
  round k+2, so every removed bet of T belongs to a round at most one after that kept bet's);
- a round that shares a bet id with a round that cannot be checked cannot be checked either
  (a repeat judged against a removed first copy);
- a record that was computed but not found can be judged missing only if its output partition
  was not truncated; a table's board only if its last 50 results are all in the window.

Everything else is "not checkable", with its reason, and never a finding.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final, Literal

import msgspec

from schemas.codec import Invalid, decode_bet, decode_round
from schemas.events import RoundOpened, RoundResult
from services.partitioner import partition_of
from services.statistics.board import WINDOW

OPENED_BEFORE: Final = "its round opened before the input window"
BETS_BEFORE: Final = "bets of its round may be before the input window"
LINKED: Final = "its bet id is also in a round that cannot be checked"
OUTPUT_CUT: Final = "its output partition no longer starts at offset 0"
INPUT_BEFORE: Final = "its input may be before the input window"
BOARD_BEFORE: Final = "its board needs results from before the input window"

Kind = Literal["rounds", "bets"]


class Span(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One partition of one topic as read: records from `start` (the log start) to `end`."""

    topic: str
    partition: int
    start: int
    end: int
    first_offset: int | None = None
    first_at: str | None = None
    """The timestamp of the first record kept (the producer's clock), ISO 8601 in UTC."""

    @property
    def cut(self) -> bool:
        """Whether records were removed from its head (retention or delete_records)."""
        return self.start > 0


class Kept(msgspec.Struct, frozen=True, kw_only=True):
    """One input message of the window: which topic, partition and offset, and its bytes."""

    kind: Kind
    partition: int
    offset: int
    value: bytes


Round = tuple[str, str]
"""(table_id, round_id)."""


class Scope:
    """Which rounds, records and boards the window lets the audit check, and why not the others."""

    def __init__(
        self,
        rounds: Sequence[Span] = (),
        bets: Sequence[Span] = (),
        outputs: Mapping[str, Sequence[Span]] | None = None,
        kept: Iterable[Kept] = (),
    ) -> None:
        self.spans: dict[str, list[Span]] = {"rounds": list(rounds), "bets": list(bets)}
        for role, spans in (outputs or {}).items():
            self.spans[role] = list(spans)
        self.partition: dict[str, int] = {}
        self.opened: dict[str, dict[str, int]] = {}
        self.results: dict[str, list[tuple[int, str]]] = {}
        self.bound: dict[str, int] = {}
        self.bets: dict[str, set[Round]] = {}
        self.doubtful: set[Round] = set()
        if self.inputs_cut:
            self._scan(kept)

    @property
    def inputs_cut(self) -> bool:
        """Whether any partition of rounds or bets lost its head."""
        return any(s.cut for kind in ("rounds", "bets") for s in self.spans[kind])

    def _scan(self, kept: Iterable[Kept]) -> None:
        """Where each table's rounds opened, its results, and its kept bets, in offset order."""
        bets: list[tuple[str, str, str]] = []
        for message in sorted(kept, key=lambda m: (m.kind, m.partition, m.offset)):
            if message.kind == "rounds":
                event = decode_round(message.value)
                if isinstance(event, Invalid):
                    continue
                table = event.table_id
                self.partition.setdefault(table, message.partition)
                opened = self.opened.setdefault(table, {})
                if isinstance(event, RoundOpened) and event.round_id not in opened:
                    opened[event.round_id] = len(opened)
                elif isinstance(event, RoundResult):
                    self.results.setdefault(table, []).append((message.offset, event.round_id))
            else:
                bet = decode_bet(message.value)
                if isinstance(bet, Invalid):
                    continue
                self.partition.setdefault(bet.table_id, message.partition)
                bets.append((bet.table_id, bet.round_id, bet.bet_id))
        for table, round_id, bet_id in bets:
            self.bets.setdefault(bet_id, set()).add((table, round_id))
            ordinal = self.opened.get(table, {}).get(round_id)
            if ordinal is None:
                if not self._span("rounds", table).cut:
                    continue  # a round never opened tells nothing of the table's order
                ordinal = -1  # opened before the window: before every round opened in it
            self.bound[table] = min(self.bound.get(table, ordinal), ordinal)

    def _span(self, role: str, table: str) -> Span:
        spans = self.spans.get(role, [])
        if not spans:
            return Span(topic=role, partition=0, start=0, end=0)
        p = self.partition.get(table)
        if p is None or p >= len(spans):
            p = partition_of(table.encode(), len(spans))
        return spans[p]

    def round(self, table: str, round_id: str) -> str | None:
        """Why the records of a round cannot be checked, or None when they can."""
        rounds_cut = self._span("rounds", table).cut
        bets_cut = self._span("bets", table).cut
        if not (rounds_cut or bets_cut):
            return None
        ordinal = self.opened.get(table, {}).get(round_id)
        if ordinal is None:
            # with the whole rounds[p], a round never opened can have no record at all
            return OPENED_BEFORE if rounds_cut else None
        if bets_cut:
            bound = self.bound.get(table)
            if bound is None or ordinal < bound + 2:
                return BETS_BEFORE
        return LINKED if (table, round_id) in self.doubtful else None

    def link(self, records: Iterable[tuple[str, str, str]]) -> None:
        """Rounds of a table that share a bet id (records' and kept bets') with a round that cannot
        be checked cannot be checked either: one may be a repeat judged against a removed copy.
        (The fold judges repeats within a table, so only the table's own rounds are tied.)"""
        if not self.inputs_cut:
            return
        by_bet: dict[tuple[str, str], set[str]] = {}
        for bet_id, rounds in self.bets.items():
            for table, round_id in rounds:
                by_bet.setdefault((table, bet_id), set()).add(round_id)
        for table, round_id, bet_id in records:
            by_bet.setdefault((table, bet_id), set()).add(round_id)
        shared = [[(table, r) for r in ids] for (table, _), ids in by_bet.items() if len(ids) > 1]
        changed = True
        while changed:  # each pass adds rounds to `doubtful`, a finite set: it ends
            changed = False
            for tied in shared:
                if any(self.round(*r) for r in tied):
                    fresh = {r for r in tied if r not in self.doubtful and self.round(*r) is None}
                    if fresh:
                        self.doubtful |= fresh
                        changed = True

    def doubt(self, table: str, round_id: str) -> None:
        """A round the committed output shows to depend on bets the window lacks."""
        if self._span("bets", table).cut:
            self.doubtful.add((table, round_id))

    def output(self, role: str, key: bytes | None) -> str | None:
        """Why a record of `role` with this key that was not found cannot be called missing."""
        spans = self.spans.get(role, [])
        if not spans:
            return None
        cut = any(s.cut for s in spans) if key is None else spans[partition_of(key, len(spans))].cut
        return OUTPUT_CUT if cut else None

    def input(self, kind: str, key: bytes | None) -> str | None:
        """Why a rejection of an input with this key may come from a removed input, or None."""
        spans = self.spans.get(kind, [])
        if key is None:
            cut = any(s.cut for s in spans)
        else:
            cut = bool(spans) and spans[partition_of(key, len(spans))].cut
        return INPUT_BEFORE if cut else None

    def board(self, table: str, round_ids: Sequence[str] | None) -> str | None:
        """Why a table's board cannot be checked (`round_ids`: the computed board, if any)."""
        if not self._span("rounds", table).cut:
            return None
        if round_ids is None or len(round_ids) < WINDOW:
            return BOARD_BEFORE
        opened = self.opened.get(table, {})
        on_board = set(round_ids)
        results = self.results.get(table, [])
        first = min((offset for offset, r in results if r in on_board), default=-1)
        if any(offset > first for offset, r in results if r not in opened):
            return BOARD_BEFORE
        return None
