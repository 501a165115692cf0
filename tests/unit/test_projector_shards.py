"""Which partitions each of several projector processes projects."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from services.history.projector import owned
from services.history.settings import ApiSettings

TOPICS = ("accepted", "table-stats", "rejected")
EVERY = [(t, p) for t in TOPICS for p in range(12)]


@pytest.mark.parametrize("shards", [1, 2, 3, 5, 12, 13])
def test_the_shards_share_every_partition_each_exactly_once(shards: int) -> None:
    parts = [owned(EVERY, (n, shards)) for n in range(shards)]
    assert sorted(tp for part in parts for tp in part) == sorted(EVERY)
    assert sum(map(len, parts)) == len(EVERY)


def test_a_shard_has_the_same_numbers_of_every_topic_so_all_of_a_table() -> None:
    for n in range(3):
        numbers = {t: {p for topic, p in owned(EVERY, (n, 3)) if topic == t} for t in TOPICS}
        assert numbers["accepted"] == numbers["table-stats"] == numbers["rejected"]
        assert numbers["accepted"] == {p for p in range(12) if p % 3 == n}


def test_one_projector_projects_everything() -> None:
    assert owned(EVERY, (0, 1)) == EVERY


def test_a_shard_past_the_count_is_refused_with_what_to_set() -> None:
    with pytest.raises(ValidationError, match="CROUPIER_API_PROJECTOR_SHARD below"):
        ApiSettings(projector_shards=2, projector_shard=2)
    assert ApiSettings(projector_shards=2, projector_shard=1).projector_shard == 1
