"""`croupier replay`: the auditor's offline replay, the very same fold, no broker."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from schemas.codec import encode
from services.settlement.fold import Fold


def lines(paths: Iterable[str]) -> Iterator[bytes]:
    """Every non-blank line of the files, in order; `-` is standard input."""
    for path in paths:
        if path == "-":
            yield from _lines(sys.stdin.buffer)
            continue
        with open(path, "rb") as stream:
            yield from _lines(stream)


def _lines(stream: BinaryIO) -> Iterator[bytes]:
    for line in stream:
        line = line.rstrip(b"\r\n")
        if line.strip():
            yield line


def replay(source: Iterable[bytes], out: BinaryIO, fold: Fold, stats: bool = False) -> int:
    """Fold every line, writing each record as one JSON line; returns the number of records."""
    written = 0
    chunk: list[bytes] = []
    for raw in source:
        for record in fold.feed_line(raw):
            chunk.append(encode(record))
        if len(chunk) >= 4096:
            written += _flush(out, chunk)
    if stats:
        for table_id in fold.tables:
            board = fold.stats(table_id)
            if board is not None:
                chunk.append(encode(board))
    written += _flush(out, chunk)
    out.flush()
    return written


def _flush(out: BinaryIO, chunk: list[bytes]) -> int:
    if not chunk:
        return 0
    out.write(b"\n".join(chunk) + b"\n")
    count = len(chunk)
    chunk.clear()
    return count
