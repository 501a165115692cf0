"""The terminal side of `croupier verify`: progress, a text or JSON verdict, the exit status."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

import msgspec

from services.audit.compare import KINDS, Finding
from services.audit.verify import Audit, Progress, audit
from services.audit.window import Span
from services.security.denied import reraise
from services.settings import Settings
from services.signing.keys import KeyFileError

OK, DIFFERENT, UNREADABLE = 0, 1, 2


def run(
    settings: Settings, *, as_json: bool, limit: int, timeout: float, quiet: bool = False
) -> int:
    """Verify the cluster of `settings`, print the verdict, return the exit status."""
    try:
        with _progress(sys.stderr, quiet) as progress:
            result = audit(settings, progress=progress, timeout=timeout)
    except KeyFileError as error:
        _fail(str(error))
        return UNREADABLE
    except LookupError as error:
        _fail(
            f"{error}; check --bootstrap and the CROUPIER_TOPIC_* names, or run `croupier topics`"
        )
        return UNREADABLE
    except TimeoutError as error:
        _fail(f"{error}; retry with a larger --timeout, or check the broker's health")
        return UNREADABLE
    except Exception as error:  # kafka-python raises its own errors for an unreachable cluster
        reraise(error, settings, doing="verify", resource="topics", operation="Describe and Read")
        _fail(
            f"cannot read from Kafka at {settings.kafka_bootstrap} ({error!r}); start it "
            "(`make kafka-up`) or pass --bootstrap / KAFKA_BOOTSTRAP"
        )
        return UNREADABLE
    sys.stdout.write(summary_json(result, limit) if as_json else text(result, limit))
    return OK if result.ok else DIFFERENT


def summary(result: Audit, limit: int) -> dict[str, Any]:
    """The machine-readable verdict: counts, the first `limit` findings and pending bets."""
    report = result.report
    by_topic: dict[str, dict[str, int]] = {}
    for f in report.findings:
        by_topic.setdefault(f.topic, dict.fromkeys(KINDS, 0))[f.kind] += f.count
    return {
        "ok": result.ok,
        "bootstrap": result.bootstrap,
        "events_in": result.events_in,
        "expected": report.expected,
        "checked": report.checked,
        "counts": report.counts(),
        "by_topic": by_topic,
        "findings_total": len(report.findings),
        "findings": [msgspec.to_builtins(f) for f in report.findings[:limit]],
        "pending_total": len(result.pending),
        "pending": [msgspec.to_builtins(p) for p in result.pending[:limit]],
        "newest_at": result.newest_at,
        "seconds": result.seconds,
        "window": {
            "whole": result.window.whole,
            "inputs": [msgspec.to_builtins(w) for w in result.window.inputs],
            "outputs": [msgspec.to_builtins(w) for w in result.window.outputs],
        },
        "not_checkable_total": report.not_checkable,
        "not_checkable": [msgspec.to_builtins(u) for u in report.unchecked],
        "pending_not_checkable": result.pending_unchecked,
    }


def summary_json(result: Audit, limit: int) -> str:
    return msgspec.json.encode(summary(result, limit)).decode() + "\n"


def text(result: Audit, limit: int) -> str:
    """The verdict for a person: figures, then each finding and pending bet (up to `limit`)."""
    report = result.report
    counts = report.counts()
    lines = [
        f"croupier verify at {result.bootstrap} ({result.seconds:.1f} s)",
        f"  input    {result.events_in} events (newest at {result.newest_at or '-'})",
        (
            f"  output   {report.checked} committed records checked against "
            f"{report.expected} computed"
            if not report.not_checkable
            else f"  output   {report.checked} committed records read, {report.expected} computed "
            "from the window"
        ),
        "  found    " + ", ".join(f"{counts[k]} {k}" for k in KINDS),
        f"  pending  {len(result.pending)} bets waiting for their round's fate",
        *_window(result),
    ]
    for finding in report.findings[:limit]:
        lines.append(_finding(finding))
    if len(report.findings) > limit:
        lines.append(f"  ... and {len(report.findings) - limit} more findings (--limit, --json)")
    for bet in result.pending[:limit]:
        lines.append(
            f"  PENDING {bet.bet_id} ({bet.table_id}/{bet.round_id}, {bet.player_id}, "
            f"{bet.stake} {bet.currency}) placed {bet.at}: {_age(bet.age_s)} behind the newest "
            f"input, {_age(bet.wall_age_s)} by the wall clock"
        )
    if len(result.pending) > limit:
        lines.append(f"  ... and {len(result.pending) - limit} more pending bets")
    if result.ok and report.not_checkable:
        lines.append(
            "OK: every record the window lets us check is exactly what the offline fold computes "
            f"({report.not_checkable} could not be checked, listed above)"
        )
    elif result.ok:
        lines.append("OK: the committed output is exactly what the offline fold computes")
    else:
        lines.append(
            f"FAILED: {len(report.findings)} findings; wallets pay what is committed, so "
            "investigate each one before settling further (details: --json)"
        )
    return "\n".join(lines) + "\n"


def _window(result: Audit) -> list[str]:
    """Which part of each partition was read, and what it did not let the audit check."""
    window = result.window
    cut_in = [w for w in window.inputs if w.cut]
    cut_out = [w for w in window.outputs if w.cut]
    if not cut_in and not cut_out:
        return ["  window   every partition from offset 0 (the whole history)"]
    lines = []
    if cut_in:
        lines.append("  window   input checked from (other input partitions from offset 0):")
        lines.extend(f"             {_span(w)}" for w in cut_in)
    else:
        lines.append("  window   every input partition from offset 0 (the whole history)")
    if cut_out:
        lines.append("  outputs  truncated (other output partitions from offset 0):")
        lines.extend(f"             {_span(w)}" for w in cut_out)
    report = result.report
    lines.append(f"  not checkable  {report.not_checkable} records (never counted as findings)")
    lines.extend(f"             {u.count} {u.topic}: {u.reason}" for u in report.unchecked)
    if result.pending_unchecked:
        lines.append(
            f"             {result.pending_unchecked} waiting bets of rounds that cannot be "
            "checked (not listed as pending)"
        )
    return lines


def _span(w: Span) -> str:
    if w.first_offset is None:
        return f"{w.topic}[{w.partition}] from offset {w.start}: nothing kept (end {w.end})"
    return (
        f"{w.topic}[{w.partition}] from offset {w.first_offset} "
        f"(first kept at {w.first_at or '-'}; log start {w.start}, end {w.end})"
    )


def _finding(f: Finding) -> str:
    copies = f" x{f.count}" if f.count > 1 else ""
    line = f"  {f.kind.upper()}{copies} {f.topic} {f.key}"
    if f.expected is not None:
        line += f"\n      expected {f.expected}"
    if f.found is not None:
        line += f"\n      found    {f.found}"
    return line


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if abs(seconds) >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.1f} s"


def _fail(message: str) -> None:
    print(f"croupier verify: error: {message}", file=sys.stderr)


@contextmanager
def _progress(stream: TextIO, quiet: bool) -> Iterator[Progress | None]:
    """A rich progress bar on a terminal, plain lines every 2 s otherwise, nothing when quiet."""
    if quiet:
        yield None
        return
    if stream.isatty():
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        columns = (TextColumn("{task.description:>16}"), BarColumn(), MofNCompleteColumn())
        with Progress(*columns, console=Console(file=stream), transient=True) as bar:

            def rich_task(topic: str) -> Callable[[int, int], None]:
                task = bar.add_task(topic, total=None)
                return lambda done, total: bar.update(task, completed=done, total=total)

            yield rich_task
        return

    def plain_task(topic: str) -> Callable[[int, int], None]:
        last = [0.0]

        def report(done: int, total: int) -> None:
            now = time.monotonic()
            if now - last[0] >= 2.0 or done >= total:
                last[0] = now
                print(f"verify: {topic}: {done}/{total} messages", file=stream, flush=True)

        return report

    yield plain_task
