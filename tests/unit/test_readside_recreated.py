"""A read-side database is ahead of its topics when it has projected a partition past that
partition's end: the topics were recreated since it was filled."""

from __future__ import annotations

from services.history.recreated import Recreated, ahead


def test_a_database_within_the_ends_of_the_topics_follows_them() -> None:
    stored = {("accepted", 0): 12, ("accepted", 1): 0, ("table-stats", 0): 40}
    ends = {("accepted", 0): 12, ("accepted", 1): 7, ("table-stats", 0): 41}
    assert ahead(stored, ends) is None


def test_a_position_past_the_end_names_the_first_such_partition_and_what_to_do() -> None:
    stored = {("accepted", 0): 12, ("accepted", 1): 374, ("table-stats", 0): 90}
    ends = {("accepted", 0): 12, ("accepted", 1): 0, ("table-stats", 0): 3}
    found = ahead(stored, ends)
    assert isinstance(found, Recreated)
    assert str(found).startswith(
        "the read side's database has projected accepted[1] up to offset 374, past its end (0)"
    )
    assert "another DATABASE_URL, or delete .data/readside.sqlite" in str(found)


def test_partitions_never_projected_or_gone_do_not_count() -> None:
    stored = {("accepted", 5): 900}
    ends = {("accepted", 0): 0, ("accepted", 1): 0}
    assert ahead(stored, ends) is None
    assert ahead({}, {("accepted", 0): 0}) is None
