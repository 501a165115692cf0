"""The round helper can only emit the contract's order, with deterministic ids and injected time."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.codec import encode
from schemas.events import BetPlaced, BettingClosed, RoundOpened, RoundResult
from schemas.records import Rejected
from services.publisher import OutOfOrder, RoundBuilder, Table, prepare
from services.settlement.fold import Fold

START = datetime(2026, 3, 1, 20, 0, tzinfo=UTC)


class Ticking:
    """A fake clock: each reading is one second after the previous one."""

    def __init__(self) -> None:
        self.readings = 0

    def __call__(self) -> datetime:
        self.readings += 1
        return START + timedelta(seconds=self.readings)


def builder(game: str = "sicbo", clock: Callable[[], datetime] | None = None) -> RoundBuilder:
    return RoundBuilder(table_id="T1", round_id="R1", game=game, clock=clock or Ticking())  # type: ignore[arg-type]


def bet(rnd: RoundBuilder, player: str = "P1") -> BetPlaced:
    return rnd.bet(player_id=player, kind="big", stake=100, currency="EUR")


def test_a_round_goes_open_bets_close_result_with_seq_one_to_n_and_last_seq_n() -> None:
    rnd = builder()
    opened = rnd.open()
    bets = [bet(rnd, f"P{n}") for n in range(3)]
    closed = rnd.close()
    result = rnd.result(dice=(1, 2, 3))
    assert isinstance(opened, RoundOpened) and opened.game == "sicbo"
    assert [b.seq for b in bets] == [1, 2, 3]
    assert isinstance(closed, BettingClosed) and closed.last_seq == 3
    assert isinstance(result, RoundResult) and result.dice == (1, 2, 3)
    assert rnd.final


def test_a_round_without_bets_closes_with_last_seq_zero() -> None:
    rnd = builder()
    rnd.open()
    assert rnd.close().last_seq == 0


def test_a_late_bet_gets_a_seq_beyond_last_seq() -> None:
    rnd = builder()
    rnd.open()
    bet(rnd)
    rnd.close()
    late = rnd.late_bet(player_id="P9", kind="small", stake=5, currency="EUR")
    assert late.seq == 2


@pytest.mark.parametrize(
    ("steps", "refused"),
    [
        ([], lambda r: bet(r)),
        ([], lambda r: r.close()),
        ([], lambda r: r.suspend("x")),
        (["open"], lambda r: r.open()),
        (["open"], lambda r: r.result(dice=(1, 1, 1))),
        (["open"], lambda r: r.reshake("dice not flat")),
        (["open"], lambda r: r.resume()),
        (["open"], lambda r: r.late_bet(player_id="P", kind="big", stake=1, currency="EUR")),
        (["open", "suspend"], lambda r: bet(r)),
        (["open", "suspend"], lambda r: r.close()),
        (["open", "suspend"], lambda r: r.suspend("again")),
        (["open", "close"], lambda r: bet(r)),
        (["open", "close", "suspend"], lambda r: r.result(dice=(1, 1, 1))),
        (["open", "close", "result"], lambda r: r.cancel("too late")),
        (["open", "close", "result"], lambda r: r.suspend("too late")),
        (["open", "close", "result"], lambda r: r.reshake("too late")),
        (["open", "cancel"], lambda r: r.close()),
        (["open", "cancel"], lambda r: r.resume()),
        (["open", "close"], lambda r: r.correct(dice=(1, 1, 1), reason="x", authorized_by="ana")),
        (["open", "close"], lambda r: r.void(reason="x", authorized_by="ana")),
        (["open", "cancel"], lambda r: r.void(reason="x", authorized_by="ana")),
        (["open", "close", "result", "void"], lambda r: r.void(reason="x", authorized_by="ana")),
        (
            ["open", "close", "result", "void"],
            lambda r: r.correct(dice=(1, 1, 1), reason="x", authorized_by="ana"),
        ),
    ],
)
def test_an_event_out_of_order_raises_and_changes_nothing(
    steps: list[str], refused: Callable[[RoundBuilder], object]
) -> None:
    rnd, twin = builder(clock=lambda: START), builder(clock=lambda: START)
    for r in (rnd, twin):
        _play(r, steps)
    with pytest.raises(OutOfOrder, match="not allowed now"):
        refused(rnd)
    assert (rnd.phase, rnd.suspended, rnd.seq) == (twin.phase, twin.suspended, twin.seq)
    if not rnd.final and rnd.phase != "new":
        assert rnd.cancel("end") == twin.cancel("end")  # same next event id: no serial was used


def _play(rnd: RoundBuilder, steps: list[str]) -> None:
    for step in steps:
        match step:
            case "open":
                rnd.open()
            case "suspend":
                rnd.suspend("dealer called the supervisor")
            case "close":
                rnd.close()
            case "result":
                rnd.result(dice=(2, 2, 5))
            case "cancel":
                rnd.cancel("void")
            case "void":
                rnd.void(reason="fault seen on video", authorized_by="ana")


def test_a_correction_needs_another_outcome_a_reason_and_who_authorised_it() -> None:
    rnd = builder()
    _play(rnd, ["open", "close", "result"])
    with pytest.raises(ValueError, match="already"):
        rnd.correct(dice=(2, 2, 5), reason="misread", authorized_by="ana")
    with pytest.raises(ValueError, match="who authorised it"):
        rnd.correct(dice=(1, 2, 3), reason="misread", authorized_by=" ")
    with pytest.raises(ValueError, match="sicbo correction needs dice"):
        rnd.correct(discs=("red", "red", "red", "red"), reason="misread", authorized_by="ana")
    first = rnd.correct(dice=(1, 2, 3), reason="misread", authorized_by="ana")
    second = rnd.correct(dice=(2, 2, 5), reason="misread again", authorized_by="ana")
    void = rnd.void(reason="fault", authorized_by="bo")
    assert (first.dice, second.dice, void.authorized_by, rnd.phase) == (
        (1, 2, 3),
        (2, 2, 5),
        "bo",
        "voided",
    )


def test_a_result_must_match_the_game() -> None:
    rnd = builder("xocdia")
    rnd.open()
    rnd.close()
    with pytest.raises(ValueError, match="xocdia result needs discs"):
        rnd.result(dice=(1, 2, 3))
    assert rnd.result(discs=("red", "red", "white", "white")).discs == (
        "red",
        "red",
        "white",
        "white",
    )


def test_event_ids_are_derived_from_table_round_and_serial_so_a_rerun_repeats_them() -> None:
    def events() -> list[bytes]:
        rnd = builder(clock=Ticking())
        return [encode(e) for e in (rnd.open(), bet(rnd), rnd.close(), rnd.result(dice=(6, 6, 6)))]  # type: ignore[arg-type]

    first, second = events(), events()
    assert first == second
    ids = [prepare(raw).event_id for raw in first]
    assert len(set(ids)) == 4


def test_at_comes_from_the_injected_clock() -> None:
    clock = Ticking()
    rnd = builder(clock=clock)
    assert rnd.open().at == "2026-03-01T20:00:01.000Z"
    assert bet(rnd).at == START + timedelta(seconds=2)
    with pytest.raises(ValueError, match="timezone-aware"):
        builder(clock=lambda: datetime(2026, 1, 1)).open()


def test_a_table_opens_the_next_round_only_after_the_fate_of_the_current_one() -> None:
    table = Table(table_id="SB-01", game="sicbo", clock=Ticking())
    first = table.next_round()
    first.open()
    with pytest.raises(OutOfOrder, match="give it a result or cancel it first"):
        table.next_round()
    first.cancel("void")
    assert table.next_round().round_id == "SB-01-000002"


ACTIONS = st.lists(
    st.sampled_from(
        [
            "bet",
            "late",
            "close",
            "suspend",
            "resume",
            "reshake",
            "result",
            "cancel",
            "correct",
            "void",
        ]
    ),
    max_size=25,
)


@settings(max_examples=300)
@given(actions=ACTIONS, game=st.sampled_from(["sicbo", "thai-hilo", "xocdia"]))
def test_whatever_the_helper_lets_out_the_fold_accepts_without_a_rejection(
    actions: list[str], game: str
) -> None:
    rnd = builder(game)
    fold = Fold()
    records = []
    for action in ["open", *actions]:
        try:
            event = _act(rnd, action)
        except OutOfOrder:
            continue
        message = prepare(event)  # type: ignore[arg-type]
        records += fold.feed(message.topic, message.value)
    assert not [r for r in records if isinstance(r, Rejected)]
    if rnd.final:
        assert fold.pending == 0


def _act(rnd: RoundBuilder, action: str) -> object:
    match action:
        case "open":
            return rnd.open()
        case "bet":
            return bet(rnd)
        case "late":
            return rnd.late_bet(player_id="P", kind="small", stake=10, currency="EUR")
        case "close":
            return rnd.close()
        case "suspend":
            return rnd.suspend("stream interrupted")
        case "resume":
            return rnd.resume()
        case "reshake":
            return rnd.reshake("dice not flat")
        case "result":
            if rnd.game == "xocdia":
                return rnd.result(discs=("red", "white", "white", "white"))
            return rnd.result(dice=(3, 4, 5))
        case "correct":
            if rnd.game == "xocdia":
                discs = ("red", "red", "white", "white")
                if rnd.outcome == discs:
                    discs = ("white", "white", "white", "white")
                return rnd.correct(discs=discs, reason="misread", authorized_by="ana")
            dice = (6, 6, 6) if rnd.outcome != (6, 6, 6) else (1, 2, 3)
            return rnd.correct(dice=dice, reason="misread", authorized_by="ana")
        case "void":
            return rnd.void(reason="fault", authorized_by="ana")
        case _:
            return rnd.cancel("void")


def test_a_round_opened_with_its_dealer_and_shaker_carries_them_on_the_wire() -> None:
    opened = builder().open(dealer_id="D07", shaker_id="SB-01 bowl 2")
    message = prepare(opened)
    assert b'"dealer_id":"D07","shaker_id":"SB-01 bowl 2"' in message.value
    assert b"dealer_id" not in prepare(builder().open()).value


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"dealer_id": ""}, "dealer_id"),
        ({"dealer_id": "D" * 65}, "dealer_id"),
        ({"shaker_id": "bowl\t2"}, "shaker_id"),
        ({"dealer_id": "D7", "shaker_id": "\u200b"}, "shaker_id"),
    ],
)
def test_an_invalid_dealer_or_shaker_id_is_refused_before_anything_is_emitted(
    fields: dict[str, str], named: str
) -> None:
    clock = Ticking()
    rnd = builder(clock=clock)
    with pytest.raises(ValueError, match=f"^{named}: expected 1 to 64 printable characters"):
        rnd.open(**fields)
    assert rnd.phase == "new" and clock.readings == 0
    assert encode(rnd.open()) == encode(builder(clock=Ticking()).open())
