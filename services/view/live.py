"""The view loop of `croupier run`: rich Live on a terminal, plain periodic lines elsewhere."""

from __future__ import annotations

import time
from collections import deque
from typing import TYPE_CHECKING

from rich.console import Console
from rich.live import Live

from services.view.render import plain, rich_view
from services.view.state import Dashboard

if TYPE_CHECKING:
    from services.run import Run
    from services.view.feed import Feed

EVERY = 5.0
"""Seconds between two plain lines."""


def _tail(path: object, lines: int = 15) -> str:
    try:
        with open(str(path), errors="replace") as log:
            return "".join(deque(log, maxlen=lines))
    except OSError as error:
        return f"(cannot read {path}: {error})"


def watch(run: Run, board: Dashboard, feed: Feed) -> int:
    """Fold the topics into the board and show it until stopped, --duration, or a child fails."""
    tty = run.out.isatty() and not run.args.plain
    began = time.monotonic()
    title = f"croupier run - Kafka {run.bootstrap} - Ctrl-C stops everything it started"

    def step() -> int | None:
        feed.poll(board, 0.25)
        elapsed = time.monotonic() - began
        if run.stopper.asked:
            return 0
        if run.over(elapsed):
            return 0
        failed = run.failed()
        if failed is not None:
            print(
                f"croupier run: {failed.name} exited on its own ({failed.state()}); the end of "
                f"its log {failed.log}:\n{_tail(failed.log)}",
                file=run.out,
                flush=True,
            )
            return 1
        return None

    code: int | None = None
    if tty:
        console = Console(file=run.out)
        with Live(console=console, refresh_per_second=4, transient=False) as live:
            while code is None:
                code = step()
                now = time.monotonic()
                live.update(rich_view(board, now, now - began, run.states(), title))
    else:
        shown = began
        while code is None:
            code = step()
            now = time.monotonic()
            if now - shown >= EVERY:
                shown = now
                print(plain(board, now, now - began, run.states()), file=run.out, flush=True)
    now = time.monotonic()
    reason = (
        "stop requested" if run.stopper.asked else "duration reached" if code == 0 else "failure"
    )
    print(
        f"croupier run: {reason}; final: {plain(board, now, now - began, run.states())}",
        file=run.out,
        flush=True,
    )
    run.out.flush()
    return code
