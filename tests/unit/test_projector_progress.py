"""What the projector logs of its progress: at most every so often, and always when asked."""

from __future__ import annotations

import time

from services.history.projector import Progress


def test_progress_is_said_once_the_interval_has_passed_and_not_before() -> None:
    progress = Progress(batches=3, messages=1_200, rows=150_000, halves=2_000)
    assert progress.report(3600) is None  # just made: nothing to say yet
    said = progress.report(0)
    assert said is not None
    assert said.startswith("3 batches, 1,200 messages (")
    assert "150,000 halves of bets (2,000 written apart)" in said
    assert "0 unreadable skipped, 0 conflicts; " in said
    assert said.endswith("0 collections of cycles in 0.00 s (0 objects freed)")


def test_the_rate_counts_only_the_messages_since_it_was_last_said() -> None:
    progress = Progress()
    progress.said = (time.monotonic() - 10, 0)
    progress.messages = 1_000
    first = progress.report(5)
    assert first is not None and "1,000 messages (" in first
    rate = float(first.split("(")[1].split("/s")[0].replace(",", ""))
    assert 90 <= rate <= 100  # 1,000 in a little over 10 s
    assert progress.report(5) is None  # said just now
    progress.said = (time.monotonic() - 10, progress.said[1])
    second = progress.report(5)
    assert second is not None and "(0/s lately)" in second  # nothing new since
