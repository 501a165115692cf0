"""The archive in an object store (fsspec): written, checked and read as in a directory, the same
figures byte for byte, and tampering refused, both in fsspec's memory store and in an S3 server
on the loopback (moto), through `s3://` as an operator configures it."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.archive.check import check
from services.archive.manifest import Tampered
from services.archive.store import Directory, ObjectStore, open_storage
from tests.unit import archived

ROOT = Path(__file__).resolve().parents[2]
MESSAGES = archived.stream(seed=11, tables=4, rounds=8)
FOUND = archived.topics(MESSAGES)


def _files(storage: Directory | ObjectStore, folder: str = "") -> dict[str, bytes]:
    """Every file under `folder`, by path."""
    found: dict[str, bytes] = {}
    for name in storage.names(folder):
        path = f"{folder}/{name}" if folder else name
        if storage.exists(path):
            found[path] = storage.get(path)
        else:
            found.update(_files(storage, path))
    return found


def test_an_object_store_url_opens_an_object_store_and_a_path_a_directory(tmp_path: Path) -> None:
    assert isinstance(open_storage(str(tmp_path)), Directory)
    assert isinstance(open_storage(f"file://{tmp_path}"), Directory)
    assert isinstance(open_storage(f"memory://archive-{uuid.uuid4().hex}"), ObjectStore)


def test_an_unknown_protocol_is_refused_saying_what_to_install() -> None:
    with pytest.raises(ValueError, match="install croupier\\[s3\\]"):
        open_storage("nosuchstore://bucket/archive")


def test_an_archive_in_an_object_store_holds_the_same_files_as_in_a_directory(
    tmp_path: Path,
) -> None:
    store = ObjectStore(f"memory://archive-{uuid.uuid4().hex}")
    archived.archive(store, FOUND)
    archived.archive(tmp_path, FOUND)
    in_store = _files(store)
    assert in_store == _files(Directory(tmp_path))
    assert any(path.startswith("days/") and path.endswith(".jsonl.gz") for path in in_store)
    assert check(store, None, None).last == check(Directory(tmp_path), None, None).last


def test_a_flipped_byte_in_an_object_store_is_refused_naming_the_object() -> None:
    store = ObjectStore(f"memory://archive-{uuid.uuid4().hex}")
    archived.archive(store, FOUND)
    target = sorted(p for p in _files(store) if p.endswith("accepted-0.jsonl.gz"))[0]
    data = bytearray(store.get(target))
    data[len(data) // 2] ^= 0x01
    store.put(target, bytes(data))
    with pytest.raises(Tampered, match=target):
        check(store, None, None)


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, str]]:
    """An S3 server on the loopback, with one bucket; the AWS variables that reach it."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {
        "AWS_ENDPOINT_URL": f"http://{host}:{port}",
        "AWS_ACCESS_KEY_ID": "croupier",
        "AWS_SECRET_ACCESS_KEY": "croupier-secret",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        import s3fs

        s3fs.S3FileSystem.clear_instance_cache()
        s3fs.S3FileSystem().mkdir("archives")
        yield env
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        server.stop()


def _croupier(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "services.cli", *args],
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, **env},
        check=False,
    )


def test_the_report_of_an_archive_in_s3_is_the_report_of_the_stream(
    s3: dict[str, str], tmp_path: Path
) -> None:
    url = f"s3://archives/{uuid.uuid4().hex}"
    archived.archive(ObjectStore(url), FOUND)
    stream = tmp_path / "stream.jsonl"
    stream.write_bytes(b"".join(raw + b"\n" for _, raw in MESSAGES))
    of_stream = _croupier(s3, "report", "--format", "json", str(stream))
    of_archive = _croupier(s3, "report", "--format", "json", "--archive", url)
    assert of_stream.returncode == of_archive.returncode == 0, of_archive.stderr
    assert of_archive.stdout == of_stream.stdout


def test_a_tampered_object_in_s3_is_refused_by_the_auditors_commands(s3: dict[str, str]) -> None:
    url = f"s3://archives/{uuid.uuid4().hex}"
    store = ObjectStore(url)
    archived.archive(store, FOUND)
    target = sorted(p for p in _files(store) if p.endswith("rejected-0.jsonl.gz"))[0]
    data = bytearray(store.get(target))
    data[-9] ^= 0x01
    store.put(target, bytes(data))
    for command in ("report", "verify"):
        done = _croupier(s3, command, "--archive", url)
        assert done.returncode == 2, done.stderr
        assert target in done.stderr.decode()
