"""`croupier keys new TABLE`: a key pair for a table, its public key added to the keys file."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TextIO

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from services.signing.keys import KeyFileError, add_public_key, private_file, public_text

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def private_path(out_dir: Path, table_id: str, public: str) -> Path:
    """`<dir>/<table>.<first 8 characters of the public key>.key.json`: a new file per key, so
    a rotation never overwrites the key still in use."""
    return out_dir / f"{_UNSAFE.sub('_', table_id)}.{public[:8]}.key.json"


def new(
    table_id: str,
    *,
    out_dir: Path,
    keys_file: Path | None,
    out: TextIO,
    key: Ed25519PrivateKey | None = None,
) -> int:
    """Write a new private key file (mode 0600) and add its public key to the table keys file."""
    if not table_id or len(table_id) > 256:
        print("croupier keys: TABLE must be a table_id of 1 to 256 characters", file=out)
        return 2
    key = key or Ed25519PrivateKey.generate()
    public = public_text(key.public_key())
    path = private_path(out_dir, table_id, public)
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        print(f"croupier keys: {path} exists already; nothing written", file=out)
        return 1
    with os.fdopen(descriptor, "wb") as stream:
        stream.write(private_file(table_id, key))
    print(f"private key of table {table_id!r}: {path} (mode 0600; keep it secret)", file=out)
    print(f'public key entry: "{table_id}": ["{public}"]', file=out)
    if keys_file is None:
        print("add the public key to the table keys file the workers read", file=out)
        return 0
    try:
        add_public_key(keys_file, table_id, key.public_key())
    except KeyFileError as error:
        print(f"croupier keys: {error}; the public key was not added", file=out)
        return 1
    print(
        f"added to {keys_file}. Next: restart the workers with CROUPIER_TABLE_KEYS_FILE="
        f"{keys_file}, then sign with the key (`croupier publish --key {path} ...`). When "
        "rotating, remove the old key only once no retained input is signed by it "
        "(docs/DESIGN.md, Key rotation)",
        file=out,
    )
    return 0
