"""`croupier replay`: the auditor's offline replay, the very same fold, no broker."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from schemas.codec import encode_lines
from schemas.records import Record
from services.settlement.fold import Fold


def lines(paths: Iterable[str]) -> Iterator[bytes]:
    """Every non-blank line of the files, in order; `-` is standard input."""
    for path in paths:
        stream = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115
        try:
            yield from stream_lines(stream)
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()


def stream_lines(stream: Iterable[bytes]) -> Iterator[bytes]:
    """Every non-blank line of a binary stream, without its line ending."""
    for line in stream:
        line = line.rstrip(b"\r\n")
        if line and not line.isspace():
            yield line


def replay(source: Iterable[bytes], out: BinaryIO, fold: Fold, stats: bool = False) -> int:
    """Fold every line, writing each record as one JSON line; returns the number of records.

    The fold keeps many small live objects and creates few cycles, so the cyclic garbage
    collector's young generation is collected less often while it runs (10% of replay time
    otherwise, measured by `make bench`); the previous thresholds are restored after.
    """
    thresholds = gc.get_threshold()
    gc.set_threshold(_YOUNG, *thresholds[1:])
    try:
        return _replay(source, out, fold, stats)
    finally:
        gc.set_threshold(*thresholds)


def _replay(source: Iterable[bytes], out: BinaryIO, fold: Fold, stats: bool) -> int:
    written = 0
    records: list[Record] = []
    chunk = bytearray()
    read = fold.read
    for raw in source:
        read(raw, records)
        if len(records) >= _RECORDS:
            written += len(records)
            chunk += encode_lines(records)
            records.clear()
            if len(chunk) >= _CHUNK:
                out.write(chunk)
                chunk.clear()
    if stats:
        for table_id in fold.tables:
            board = fold.stats(table_id)
            if board is not None:
                records.append(board)
    written += len(records)
    chunk += encode_lines(records)
    out.write(chunk)
    out.flush()
    return written


_RECORDS = 64
"""Records encoded at once: few enough to be freed before the garbage collector looks at them."""
_CHUNK = 1 << 20
_YOUNG = 1_000_000
"""Allocations between two collections of the youngest generation during a replay."""
