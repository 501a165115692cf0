"""`croupier replay`: the auditor's offline replay, the very same fold, no broker."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import BinaryIO

from schemas.codec import encode_lines
from schemas.events import AnyEvent
from schemas.records import Record
from services.settlement.fold import Fold


def lines(paths: Iterable[str]) -> Iterator[bytes]:
    """Every line of the files, in order, without its line ending; `-` is standard input.

    Blank lines come too (the fold reads them as nothing).
    """
    return chain.from_iterable(_blocks(paths))


def split_lines(text: bytes) -> list[bytes]:
    """The lines of a text, without their line endings (LF or CRLF)."""
    if b"\r" in text:
        return [line.rstrip(b"\r") for line in text.split(b"\n")]
    return text.split(b"\n")


def _blocks(paths: Iterable[str]) -> Iterator[list[bytes]]:
    for path in paths:
        stream = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115
        try:
            # read1: what is there, up to a block, so that a pipe's lines are not held back
            read = stream.read1 if isinstance(stream, io.BufferedIOBase) else stream.read
            rest = b""
            while data := read(_BLOCK):
                lines = data.split(b"\n")
                if rest:
                    lines[0] = rest + lines[0]
                rest = lines.pop()
                if not lines:
                    continue
                if b"\r" in data or b"\r" in lines[0]:
                    lines = [line.rstrip(b"\r") for line in lines]
                yield lines
            if rest:
                yield split_lines(rest)
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()


def replay(source: Iterable[bytes], out: BinaryIO, fold: Fold, stats: bool = False) -> int:
    """Fold every line, writing each record as one JSON line; returns the number of records.

    With `stats`, a table_stats record of every table with a result ends the output.
    """
    written = 0
    records: list[Record] = []
    chunk: list[bytes] = []
    size = 0
    feed = fold.feed
    for raw in source:
        feed(None, raw, records)
        if len(records) >= _RECORDS:
            written += len(records)
            piece = encode_lines(records)
            records.clear()
            chunk.append(piece)
            size += len(piece)
            if size >= _CHUNK:
                out.write(b"".join(chunk))
                chunk.clear()
                size = 0
    if stats:
        for table_id in fold.tables:
            board = fold.stats(table_id)
            if board is not None:
                records.append(board)
    written += len(records)
    chunk.append(encode_lines(records))
    out.write(b"".join(chunk))
    out.flush()
    return written


def journaled(
    source: Iterable[bytes], fold: Fold
) -> Iterator[tuple[list[tuple[AnyEvent, bytes]], list[Record]]]:
    """Fold every line with a fold that keeps its journal; after each, the inputs it accepted
    (decoded and raw; never a rejected or redelivered one) and the records it wrote: what
    croupier decided, for what is built on a replay (`croupier report`, `croupier integrity`).
    Both lists are emptied before the next line."""
    journal = fold.journal
    if journal is None:
        raise ValueError("the fold must keep its journal (Fold(journal=True))")
    records: list[Record] = []
    feed = fold.feed
    for raw in source:
        feed(None, raw, records)
        yield journal.accepted, records
        journal.clear()
        records.clear()


_BLOCK = 1 << 20
"""Bytes read from a file at once."""
_RECORDS = 64
"""Records encoded at once."""
_CHUNK = 1 << 20
"""Bytes of output written at once."""
