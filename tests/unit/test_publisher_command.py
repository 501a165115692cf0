"""`croupier publish` stops at an invalid line, or skips it when told, and says what it did."""

from __future__ import annotations

import io
from pathlib import Path

from services.publisher.command import publish
from tests.unit.test_publisher_sending import FakeProducer, publisher, round_of


def _file(tmp_path: Path, lines: list[bytes]) -> str:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return str(path)


def test_an_invalid_line_stops_publishing_with_its_place_and_reason(tmp_path: Path) -> None:
    events = round_of("SB-01")
    bad = events[2].replace(b'"stake":10', b'"stake":-5')
    name = _file(tmp_path, [events[0], events[1], b"", bad, events[3]])
    producer, err = FakeProducer(), io.StringIO()
    code = publish(publisher(producer), [name], skip_invalid=False, err=err)
    assert code == 1
    assert f"{name}:4: invalid event (invalid_field): stake" in err.getvalue()
    assert "--skip-invalid" in err.getvalue()
    assert [v for _, _, v in producer.log] == events[:2]


def test_skip_invalid_reports_each_bad_line_and_sends_the_rest(tmp_path: Path) -> None:
    events = round_of("SB-01")
    name = _file(tmp_path, [events[0], b"garbage", events[1], b'{"type":"x","v":1}', *events[2:]])
    producer, err = FakeProducer(), io.StringIO()
    code = publish(publisher(producer), [name], skip_invalid=True, err=err)
    assert code == 0
    assert [v for _, _, v in producer.log] == events
    assert f"{name}:2: skipped, invalid event (malformed)" in err.getvalue()
    assert f"{name}:4: skipped, invalid event (unknown_type)" in err.getvalue()
    assert "5 events published (3 to r, 2 to b), 2 invalid lines skipped" in err.getvalue()


def test_a_missing_file_is_named() -> None:
    err = io.StringIO()
    assert (
        publish(publisher(FakeProducer()), ["/nonexistent.jsonl"], skip_invalid=False, err=err) == 2
    )
    assert "no such file: /nonexistent.jsonl" in err.getvalue()
