"""The paytables of every game: which wagers exist, and the memoized verdict of each."""

from collections.abc import Callable, Mapping, Sequence
from itertools import permutations
from typing import NamedTuple

from . import sicbo, thai_hilo, xocdia
from .model import Odds, Outcome, Pick, Verdict, Wager, odds
from .outcomes import GAMES, canonical, outcomes


class Rules(NamedTuple):
    """One game's paytable: the canonical picks of each kind and the rule that decides them."""

    picks: Mapping[str, tuple[Pick, ...]]
    ordered: frozenset[str]
    decide: Callable[[str, Pick, Outcome], Verdict]


RULES: Mapping[str, Rules] = {
    "sicbo": Rules(sicbo.PICKS, sicbo.ORDERED, sicbo.decide),
    "thai-hilo": Rules(thai_hilo.PICKS, thai_hilo.ORDERED, thai_hilo.decide),
    "xocdia": Rules(xocdia.PICKS, xocdia.ORDERED, xocdia.decide),
}
assert tuple(RULES) == GAMES

_WAGERS: Mapping[str, tuple[Wager, ...]] = {
    game: tuple(Wager(game, kind, pick) for kind, picks in rules.picks.items() for pick in picks)
    for game, rules in RULES.items()
}
_KNOWN = frozenset(w for listed in _WAGERS.values() for w in listed)
_ACCEPTED: Mapping[tuple[str, str, Pick], Wager] = {
    (w.game, w.kind, order): w
    for w in _KNOWN
    for order in ([w.pick] if w.kind in RULES[w.game].ordered else permutations(w.pick))
}
"""Every pick a bet may carry, in every order it may come in, to its canonical wager."""
_MEMO: dict[Wager, dict[Outcome, Verdict]] = {}

_BOARDS: dict[tuple[str, Outcome], Mapping[tuple[str, Pick], Odds]] = {}
_CANONICAL_BOARDS: dict[tuple[str, tuple[int, ...]], Mapping[tuple[str, Pick], Odds]] = {}
_ACCEPTED_BY_GAME: Mapping[str, tuple[tuple[tuple[str, Pick], Wager], ...]] = {
    game: tuple(((kind, pick), w) for (of, kind, pick), w in _ACCEPTED.items() if of == game)
    for game in RULES
}


def wager(game: str, kind: str, pick: Sequence[int]) -> Wager | None:
    """The canonical wager, or None when kind or pick does not exist for the game (invalid_bet)."""
    try:
        values = tuple(pick)
        found = _ACCEPTED.get((game, kind, values))
    except TypeError:
        return None
    if found is None or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return None
    return found


def wagers(game: str) -> tuple[Wager, ...]:
    """Every valid wager of the game, kinds in paytable order, picks in canonical form."""
    found = _WAGERS.get(game)
    if found is None:
        raise ValueError(f"unknown game {game!r}: expected one of {', '.join(GAMES)}")
    return found


def verdict(w: Wager, outcome: Outcome) -> Verdict:
    """The verdict of a valid wager on an outcome of its game; ValueError for anything else."""
    try:
        return _MEMO[w][outcome]
    except (KeyError, TypeError):
        return _verdict_on_miss(w, outcome)


def odds_board(game: str, outcome: Outcome) -> Mapping[tuple[str, Pick], Odds]:
    """The odds of every (kind, pick) a bet of the game may carry, on one outcome, built once.

    A pair absent from it is not a wager of the game (invalid_bet). Picks are looked up in the
    order the bet carries them, so a settlement costs one lookup, whatever the wager.
    """
    key = (game, outcome)
    board = _BOARDS.get(key)
    if board is None:
        board = _BOARDS.setdefault(key, _odds_board(game, outcome))
    return board


def _odds_board(game: str, outcome: Outcome) -> Mapping[tuple[str, Pick], Odds]:
    """Built once per canonical outcome (every rule looks at that alone), each wager decided on
    this outcome only: a worker that has just restored a task builds the boards of the outcomes
    it meets, not every wager's verdict on every outcome."""
    rules = RULES.get(game)
    if rules is None:
        raise ValueError(f"unknown game {game!r}: expected one of {', '.join(GAMES)}")
    key = (game, canonical(outcome))
    board = _CANONICAL_BOARDS.get(key)
    if board is None:
        decided = {w: odds(rules.decide(w.kind, w.pick, outcome)) for w in _WAGERS[game]}
        board = {pair: decided[w] for pair, w in _ACCEPTED_BY_GAME[game]}
        board = _CANONICAL_BOARDS.setdefault(key, board)
    return board


def _verdict_on_miss(w: Wager, outcome: Outcome) -> Verdict:
    try:
        known = w in _KNOWN
    except TypeError:
        known = False
    if not known:
        raise ValueError(f"{w!r} is not a valid wager")
    table = _MEMO.get(w)
    if table is None:
        table = _MEMO.setdefault(w, _table(w))
    try:
        return table[tuple(outcome)]  # type: ignore[index]  # a list of dice is looked up as a tuple
    except (KeyError, TypeError):
        raise ValueError(f"{outcome!r} is not an outcome of {w.game}") from None


def _table(w: Wager) -> dict[Outcome, Verdict]:
    """The verdict on every ordered outcome, decided once per canonical outcome."""
    decide = RULES[w.game].decide
    by_canonical: dict[tuple[int, ...], Verdict] = {}
    table: dict[Outcome, Verdict] = {}
    for o in outcomes(w.game):
        key = canonical(o)
        found = by_canonical.get(key)
        if found is None:
            found = by_canonical[key] = decide(w.kind, w.pick, o)
        table[o] = found
    return table
