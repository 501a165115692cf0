"""The log line of a large transaction says where its time went, whenever the loop gets to it."""

from __future__ import annotations

import logging
import re
import time

import pytest

from services.settlement.committed import LOUD, kept
from services.settlement.metrics import Metrics
from services.settlement.transaction import Inflight


def test_the_input_wait_ends_when_the_fold_began_not_when_the_commit_was_seen(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = time.monotonic()
    inflight = Inflight(
        folds={0: 1},
        out=LOUD,
        started=now - 0.5,  # the batch was read and its fold began half a second ago,
        folded=now - 0.45,  # folded in 50 ms,
        newest=time.time() - 0.52,  # 20 ms after its newest input was written,
    )
    with caplog.at_level(logging.INFO, logger="croupier.engine"):
        kept(inflight, {}, None, Metrics(), done=now - 0.4)  # committed 100 ms later
    (line,) = [r.getMessage() for r in caplog.records if "records out" in r.getMessage()]
    waited, fold, commit = map(int, re.findall(r"(\d+) ms", line))
    assert 15 <= waited <= 30  # the 400 ms since the commit are not the input's
    assert (fold, commit) == (50, 50)
