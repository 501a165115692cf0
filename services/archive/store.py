"""Where the archive's files live: a small interface and its directory implementation.

The archive needs five operations of its storage: read a whole file, write a whole file
atomically and durably (a reader sees the old file or the new one, never part of one, and after
`put` returns the file survives a crash), list the names under a folder, remove a file, and say
whether a file exists. An object store gives the first four directly (an object is written whole
and appears on completion); an s3 implementation with fsspec or boto3 would map `put` to one
PUT, `names` to a listing by prefix and `remove` to DELETE (docs/OPERATIONS.md, "The archive").
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol


class Storage(Protocol):
    def get(self, path: str) -> bytes: ...
    def put(self, path: str, data: bytes) -> None: ...
    def names(self, folder: str) -> list[str]: ...
    def remove(self, path: str) -> None: ...
    def exists(self, path: str) -> bool: ...


class Directory:
    """A local directory: a file written to a temporary name, fsynced, renamed, its folder
    fsynced."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def get(self, path: str) -> bytes:
        return (self.root / path).read_bytes()

    def put(self, path: str, data: bytes) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.tmp")
        with open(temporary, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
        _sync(target.parent)

    def names(self, folder: str) -> list[str]:
        where = self.root / folder
        return sorted(p.name for p in where.iterdir()) if where.is_dir() else []

    def remove(self, path: str) -> None:
        (self.root / path).unlink(missing_ok=True)

    def exists(self, path: str) -> bool:
        return (self.root / path).is_file()


def _sync(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def open_storage(where: str) -> Storage:
    """The storage at `where`: a directory path (an object store's URL is refused, naming what
    it needs)."""
    if "://" in where and not where.startswith("file://"):
        raise ValueError(
            f"{where}: only a directory is supported; an object store needs an implementation of "
            "services.archive.store.Storage (docs/OPERATIONS.md, 'The archive')"
        )
    return Directory(where.removeprefix("file://"))
