"""An archived record as one JSON line, and a data file as gzip JSON Lines (pure).

A line is `{"p":partition,"o":offset,"t":timestamp_ms,"k":key,"v":value}`: the value is spliced
in verbatim when it is JSON (croupier writes only JSON to `accepted` and `rejected`), so it reads
back byte for byte; a key or value that is not UTF-8 JSON goes as base64 in `k64` or `v64`.
"""

from __future__ import annotations

import base64
import gzip
from collections.abc import Iterable, Iterator
from typing import Final

import msgspec

LEVEL: Final = 6
"""gzip's compression level (docs/DECISIONS.md, "The archive")."""


class Line(msgspec.Struct, frozen=True, kw_only=True):
    p: int
    o: int
    t: int = -1
    k: str | None = None
    k64: str | None = None
    v: msgspec.Raw = msgspec.Raw(b"")
    v64: str | None = None

    @property
    def key(self) -> bytes | None:
        if self.k64 is not None:
            return base64.b64decode(self.k64)
        return None if self.k is None else self.k.encode()

    @property
    def value(self) -> bytes:
        if self.v64 is not None:
            return base64.b64decode(self.v64)
        return bytes(self.v)


_encode = msgspec.json.Encoder().encode
_check = msgspec.json.Decoder(msgspec.Raw).decode
_decode = msgspec.json.Decoder(Line).decode


def line(partition: int, offset: int, timestamp: int, key: bytes | None, value: bytes) -> bytes:
    """One record's line, with its newline."""
    head = b'{"p":%d,"o":%d,"t":%d' % (partition, offset, timestamp)
    if key is not None:
        try:
            head += b',"k":' + _encode(key.decode())
        except UnicodeDecodeError:
            head += b',"k64":"' + base64.b64encode(key) + b'"'
    try:
        if value.strip() != value:
            raise msgspec.DecodeError("surrounding whitespace would not read back")
        _check(value)
        return head + b',"v":' + value + b"}\n"
    except msgspec.DecodeError:
        return head + b',"v64":"' + base64.b64encode(value) + b'"}\n'


def compress(lines: Iterable[bytes]) -> bytes:
    """One gzip member (members concatenated are one gzip file: how a day's files are merged).
    Its header's time is 0, so the same lines always give the same bytes."""
    return gzip.compress(b"".join(lines), compresslevel=LEVEL, mtime=0)


def read(data: bytes) -> Iterator[Line]:
    """The lines of a data file."""
    for raw in gzip.decompress(data).splitlines():
        if raw:
            yield _decode(raw)
