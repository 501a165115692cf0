"""On a real broker, a worker given the table keys rejects a forged result and pays a signed one."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from schemas.codec import encode
from services.audit.reader import read_topic
from services.settlement.fold import Fold
from services.signing.keys import load, public_text
from services.simulation.streams import Streams
from tests.kafka import create_topics, isolated_settings, publish, wait_caught_up, workers
from tests.unit.builders import bet, round_event
from tests.unit.signing import KEY_T1, signed_event


def test_a_worker_rejects_a_forged_result_on_a_keyed_table_and_pays_the_signed_one(
    kafka: str, tmp_path: Path
) -> None:
    listing = tmp_path / "table-keys.json"
    listing.write_text(json.dumps({"tables": {"T1": [public_text(KEY_T1.public_key())]}}))
    settings = isolated_settings(kafka, partitions=2, table_keys_file=str(listing))
    create_topics(settings)
    forged = round_event("result", dice=[6, 6, 5], event_id="forged")
    streams = Streams(
        rounds=[
            round_event("opened", game="sicbo"),
            round_event("betting_closed", last_seq=1),
            forged,
            signed_event("result", dice=[1, 2, 3]),
            round_event("opened", "R1", "T2", game="sicbo"),
            round_event("betting_closed", "R1", "T2", last_seq=1),
            round_event("result", "R1", "T2", dice=[6, 6, 5]),
        ],
        bets=[bet(1, stake=100), bet(1, table_id="T2", stake=100)],
    )
    publish(settings, streams, seed=3)
    with workers(settings, 1):
        wait_caught_up(settings)
    rejected = [msgspec.json.decode(m.value) for m in read_topic(settings, settings.topic_rejected)]
    assert [(r["reason"], r["raw"]) for r in rejected] == [("bad_signature", forged.decode())]
    settlements = {
        (s := msgspec.json.decode(m.value))["table_id"]: s
        for m in read_topic(settings, settings.topic_settlements)
    }
    assert (settlements["T1"]["dice"], settlements["T1"]["payout"]) == ([1, 2, 3], 0)
    assert (settlements["T2"]["dice"], settlements["T2"]["payout"]) == ([6, 6, 5], 200)
    offline = Fold(keys=load(listing))
    expected = sorted(encode(r) for kind, raw in streams.tagged() for r in offline.feed(kind, raw))
    committed = sorted(
        m.value
        for topic in (settings.topic_settlements, settings.topic_rejected)
        for m in read_topic(settings, topic)
    )
    assert committed == expected
