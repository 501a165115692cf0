"""The archive's manifest chain: any changed byte, missing day, reordering or lost commit point
is refused, naming the file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from services.archive.check import check
from services.archive.manifest import Tampered
from services.archive.source import open_archive
from services.archive.store import Directory
from tests.unit import archived


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("archive")
    archived.archive(root, archived.topics(archived.stream()))
    return root


@pytest.fixture
def root(original: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "archive"
    shutil.copytree(original, copy)
    return copy


def _sealed(root: Path) -> list[str]:
    return sorted(p.parent.name for p in root.glob("days/*/manifest.json"))


def _refused(root: Path) -> Tampered:
    with pytest.raises(Tampered) as caught:
        check(Directory(root), None, None)
    return caught.value


def test_an_untouched_archive_passes_with_sealed_days_and_an_open_one(root: Path) -> None:
    checked = check(Directory(root), None, None)
    sealed = _sealed(root)
    assert len(sealed) >= 3
    assert checked.first == sealed[0]
    assert checked.last > sealed[-1]  # the newest day is not sealed yet


@pytest.mark.parametrize("which", ["sealed", "open"])
def test_one_flipped_byte_in_any_data_file_is_refused_naming_it(root: Path, which: str) -> None:
    files = sorted(root.glob("days/*/*.jsonl.gz"))
    sealed = set(_sealed(root))
    target = next(f for f in files if (f.parent.name in sealed) == (which == "sealed"))
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x01
    target.write_bytes(bytes(data))
    refused = _refused(root)
    assert refused.path == str(target.relative_to(root))
    assert "SHA-256" in refused.problem and "restore it from a copy" in refused.problem


def test_a_deleted_day_is_refused_naming_the_missing_manifest(root: Path) -> None:
    middle = _sealed(root)[1]
    shutil.rmtree(root / "days" / middle)
    refused = _refused(root)
    assert refused.path == f"days/{middle}/manifest.json"
    assert "missing" in refused.problem


def test_two_days_swapped_are_refused(root: Path) -> None:
    first, second = _sealed(root)[:2]
    a, b = root / "days" / first, root / "days" / second
    a.rename(root / "swap")
    b.rename(a)
    (root / "swap").rename(b)
    refused = _refused(root)
    assert refused.path == f"days/{first}/manifest.json"


def test_a_manifest_edited_is_refused_by_the_next_days_link(root: Path) -> None:
    first, second = _sealed(root)[:2]
    manifest = root / "days" / first / "manifest.json"
    manifest.write_bytes(manifest.read_bytes().replace(b'"records":', b'"records": ', 1))
    refused = _refused(root)
    assert refused.path == f"days/{second}/manifest.json"
    assert "previous SHA-256" in refused.problem


def test_the_last_sealed_manifest_edited_is_refused_by_the_commit_point(root: Path) -> None:
    last = root / "days" / _sealed(root)[-1] / "manifest.json"
    last.write_bytes(last.read_bytes() + b" ")
    assert _refused(root).path == "open.json"


def test_a_lost_commit_point_is_refused(root: Path) -> None:
    (root / "open.json").unlink()
    assert _refused(root).path == "open.json"


def test_a_range_outside_the_archive_is_refused_saying_what_it_holds(root: Path) -> None:
    first = _sealed(root)[0]
    with pytest.raises(Tampered, match=f"holds {first} to"):
        open_archive(str(root), "2001-01-01", None)


def test_a_tampered_day_after_to_does_not_stop_a_range_before_it(root: Path) -> None:
    sealed = _sealed(root)
    for f in (root / "days" / sealed[-1]).glob("*.jsonl.gz"):
        f.write_bytes(f.read_bytes()[:-1])
    assert check(Directory(root), sealed[0], sealed[-2]).files
    with pytest.raises(Tampered):
        check(Directory(root), sealed[0], sealed[-1])
