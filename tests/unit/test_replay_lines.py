"""How `croupier replay` cuts its input into lines: in blocks, in C, exactly as line by line."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.settlement import replay as replay_module
from services.settlement.fold import Fold
from services.settlement.replay import lines, split_lines
from tests.unit.builders import bet, round_event


def line_by_line(text: bytes) -> list[bytes]:
    """The reference: a binary stream read line by line, each line's trailing CRs and LF cut
    off, blank lines dropped."""
    cut = [line.rstrip(b"\r\n") for line in io.BytesIO(text)]
    return [line for line in cut if line and not line.isspace()]


def test_lf_and_crlf_endings_are_cut_and_a_last_line_without_one_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"one\r\ntwo\n\n  \nthree")
    assert [line for line in lines([str(path)]) if line.strip()] == [b"one", b"two", b"three"]


def test_a_carriage_return_inside_a_line_is_kept() -> None:
    assert split_lines(b'{"a":\r1}\r\nnext') == [b'{"a":\r1}', b"next"]


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64, 1 << 20])
def test_lines_longer_than_a_block_are_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    monkeypatch.setattr(replay_module, "_BLOCK", block)
    text = b"a" * 100 + b"\r\n" + b"b" * 5 + b"\n\ncc\n" + b"d" * 70
    path = tmp_path / "events.jsonl"
    path.write_bytes(text)
    got = [line for line in lines([str(path), str(path)]) if line and not line.isspace()]
    assert got == line_by_line(text) * 2


@settings(max_examples=300)
@given(
    text=st.lists(
        st.sampled_from([b"{", b"}", b" ", b"\r", b"\n", b"\r\n", b"x"]), max_size=60
    ).map(b"".join),
    block=st.integers(min_value=1, max_value=16),
)
def test_any_text_in_any_block_size_gives_the_lines_of_reading_it_line_by_line(
    tmp_path_factory: pytest.TempPathFactory, text: bytes, block: int
) -> None:
    path = tmp_path_factory.mktemp("lines") / "events.jsonl"
    path.write_bytes(text)
    original = replay_module._BLOCK
    replay_module._BLOCK = block
    try:
        got = [line for line in lines([str(path)]) if line and not line.isspace()]
    finally:
        replay_module._BLOCK = original
    assert got == line_by_line(text)


def test_blank_lines_give_nothing_and_change_nothing() -> None:
    events = [
        round_event("opened", game="sicbo"),
        bet(1, "big", stake=100),
        round_event("betting_closed", last_seq=1),
        round_event("result", dice=[6, 5, 1]),
    ]
    plain, padded = Fold(), Fold()
    want = [r for raw in events for r in plain.feed(None, raw)]
    got = [
        r
        for raw in events
        for blank in (b"", b"  \t")
        for r in padded.feed(None, blank) + padded.feed(None, raw)
    ]
    assert got == want
    assert len(want) == 1
