"""`croupier report FILE...`: the regulator's report from a replay file (the very same fold)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator

from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

from services.reports.figures import Report
from services.reports.render import as_csv, as_json, as_text
from services.settlement.fold import Fold
from services.settlement.replay import journaled, lines
from services.signing.signature import NO_KEYS, TableKeys

FORMATS = {"text": as_text, "csv": as_csv, "json": as_json}


def build(
    source: Iterable[bytes],
    horizon: int,
    keys: TableKeys = NO_KEYS,
    *,
    fold: Fold | None = None,
    report: Report | None = None,
) -> Report:
    """Fold every line and report on what the fold decided and the round events it accepted;
    given a fold (keeping its journal) and a report that have read what came before, go on from
    them."""
    fold = Fold(horizon=horizon, journal=True, keys=keys) if fold is None else fold
    report = Report() if report is None else report
    for inputs, records in journaled(source, fold):
        for event, _ in inputs:
            report.accepted(event)
        for record in records:
            report.record(record)
    return report


def _with_progress(paths: list[str], progress: Progress) -> Iterator[bytes]:
    sizes = [os.path.getsize(p) for p in paths if p != "-"]
    task = progress.add_task("reading", total=sum(sizes) or None)
    done = 0
    for n, line in enumerate(lines(paths)):
        done += len(line) + 1
        if n % 20000 == 0:
            progress.update(task, completed=done)
        yield line
    progress.update(task, completed=done)


def main(paths: list[str], output: str, horizon: int, keys: TableKeys = NO_KEYS) -> int:
    """Print the report; a progress bar on standard error while a terminal watches."""
    progress = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        transient=True,
        disable=not sys.stderr.isatty(),
    )
    try:
        with progress:
            report = build(_with_progress(paths, progress), horizon, keys)
    except FileNotFoundError as error:
        print(f"croupier report: no such file: {error.filename}", file=sys.stderr)
        return 2
    sys.stdout.write(FORMATS[output](report))
    return 0
