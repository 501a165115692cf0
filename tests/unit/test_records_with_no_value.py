"""A Kafka record with no value (null, as a tombstone has) is bad input like any other: the
fold rejects it, every reader counts it, and none of them stops on it."""

from __future__ import annotations

import msgspec
import pytest

from schemas.codec import payload
from schemas.records import Rejected
from services.history import counters
from services.history.projection import SOURCES, Changes
from services.settlement.fold import Fold
from services.view.state import Dashboard
from services.wallet.credit import credit_of


@pytest.mark.parametrize("topic", ["rounds", "bets"])
def test_the_fold_rejects_an_input_with_no_value_as_an_empty_malformed_message(topic: str) -> None:
    fold = Fold()

    out = fold.feed(topic, None)

    assert out == [
        Rejected(
            v=1,
            reason="malformed",
            detail="an empty message (no value, or a null one as a tombstone has): expected a "
            "JSON event",
            topic=topic,
            raw="",
        )
    ]
    assert fold.tables == {} and fold.pending == 0
    assert fold.feed(topic, b"") == out  # an empty value is the same message


@pytest.mark.parametrize("source", SOURCES)
def test_the_projection_counts_a_record_with_no_value_as_unreadable_and_changes_nothing(
    source: str,
) -> None:
    changes = Changes()

    changes.feed(source, None)  # type: ignore[arg-type]

    assert len(changes.unreadable) == 1 and changes.unreadable[0].startswith(f"{source}: ")
    assert counters.of_batch(changes) == {
        ("croupier_read_events_total", f'{{topic="{source}"}}'): 1,
        ("croupier_read_unreadable_total", f'{{topic="{source}"}}'): 1,
    }
    assert not (
        changes.pairs.halves or changes.pairs.joined or changes.round_events or changes.boards
    )


def test_the_live_view_and_the_wallet_count_a_record_with_no_value_as_unreadable() -> None:
    board = Dashboard()
    for role in ("rounds", "bets", "settlements"):
        board.read(role, payload(None), now=0.0)
    assert board.unreadable == 3
    with pytest.raises(msgspec.DecodeError):
        credit_of(payload(None))
