"""Where the archive's files live: a small interface and its directory implementation.

The archive needs five operations of its storage: read a whole file, write a whole file
atomically and durably (a reader sees the old file or the new one, never part of one, and after
`put` returns the file survives a crash), list the names under a folder, remove a file, and say
whether a file exists. A directory needs a temporary file, fsync and rename for `put`; an object
store gives all five directly, through fsspec: an object is written whole by one PUT and appears
on completion, `names` is a listing by prefix, `remove` a DELETE (docs/OPERATIONS.md, "The
archive").
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any, Protocol


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


class ObjectStore:
    """An object store through fsspec: `s3://bucket/prefix` with s3fs (`pip install
    croupier[s3]`; credentials and endpoint from the AWS variables, `AWS_ENDPOINT_URL` for an
    S3-compatible store), or any other fsspec protocol installed. Listings are read afresh each
    time: another process (an auditor, the archive restarted) may have written since."""

    def __init__(self, url: str) -> None:
        try:
            import fsspec  # type: ignore[import-untyped]  # only an object store needs it
            from fsspec.core import url_to_fs  # type: ignore[import-untyped]
        except ImportError as error:  # pragma: no cover: fsspec is a dependency
            raise ValueError(f"{url}: an object store needs fsspec ({error})") from error
        try:
            fs, root = url_to_fs(url)
        except (ImportError, ValueError) as error:
            known = ", ".join(sorted(fsspec.available_protocols())[:12])
            raise ValueError(
                f"{url}: no filesystem for it ({error}); for s3:// install croupier[s3] "
                f"(s3fs); protocols fsspec knows: {known}, ..."
            ) from error
        self.fs: Any = fs
        self.root = root.rstrip("/")
        self.url = url

    def _at(self, path: str) -> str:
        return f"{self.root}/{path}" if path else self.root

    def get(self, path: str) -> bytes:
        return bytes(self.fs.cat_file(self._at(path)))

    def put(self, path: str, data: bytes) -> None:
        self.fs.pipe_file(self._at(path), data)

    def names(self, folder: str) -> list[str]:
        where = self._at(folder)
        self.fs.invalidate_cache(where)
        try:
            found = self.fs.ls(where, detail=False)
        except FileNotFoundError:
            return []
        return sorted({str(p).rstrip("/").rsplit("/", 1)[-1] for p in found} - {""})

    def remove(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm_file(self._at(path))

    def exists(self, path: str) -> bool:
        target = self._at(path)
        self.fs.invalidate_cache(target.rsplit("/", 1)[0])
        return bool(self.fs.isfile(target))


def open_storage(where: str) -> Storage:
    """The storage at `where`: a directory (a path, or file://), else an object store's URL."""
    if "://" in where and not where.startswith("file://"):
        return ObjectStore(where)
    return Directory(where.removeprefix("file://"))
