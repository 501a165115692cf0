"""Ed25519 keys of signing tables: their text form, the table keys file, private key files.

A public or private key is written as its 32 bytes in base64url without padding (the `x` and `d`
of an OKP JSON Web Key, RFC 8037). The table keys file is JSON (`schemas/keys.py`,
`schemas/json/table-keys.schema.json`): `{"v": 1, "tables": {"<table_id>": ["<key>", ...]}}`.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Annotated, Final

import msgspec
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from schemas.keys import PrivateKeyFile, PublicKeyText, TableKeysFile
from services.signing.base64url import data, text
from services.signing.signature import NO_KEYS, TableKeys

_KEYS_FILE: Final = msgspec.json.Decoder(TableKeysFile)
_PRIVATE_FILE: Final = msgspec.json.Decoder(PrivateKeyFile)
_ENCODER: Final = msgspec.json.Encoder()
_KEY_LIST: Final = Annotated[list[PublicKeyText], msgspec.Meta(min_length=1)]


class KeyFileError(ValueError):
    """A key file that cannot be used: which file, what is wrong, and what to do."""


def public_text(key: Ed25519PublicKey) -> str:
    """A public key as it is written in the table keys file."""
    return text(key.public_bytes(Encoding.Raw, PublicFormat.Raw))


def private_key(seed: bytes) -> Ed25519PrivateKey:
    """The private key of a 32-byte seed."""
    return Ed25519PrivateKey.from_private_bytes(seed)


def derived_key(*parts: str) -> Ed25519PrivateKey:
    """A private key derived from names (SHA-256 of them): for tests and the simulator only,
    whose streams must be reproducible; anyone who knows the names can sign with it."""
    return private_key(hashlib.sha256("\n".join(("croupier test key", *parts)).encode()).digest())


def parse(raw: bytes, source: str = "the table keys file") -> TableKeys:
    """The public keys of each table in a table keys file's bytes."""
    try:
        found = _KEYS_FILE.decode(raw)
    except msgspec.ValidationError as error:
        raise KeyFileError(
            f"{source}: {_where(raw, error)}; expected "
            '{"v": 1, "tables": {"<table_id>": ["<key>", ...]}} with each key 43 characters of '
            "base64url (schemas/json/table-keys.schema.json; `croupier keys new TABLE` writes "
            "entries)"
        ) from None
    except msgspec.DecodeError as error:
        raise KeyFileError(f"{source}: not valid JSON ({error}); fix the file") from None
    tables: dict[str, tuple[Ed25519PublicKey, ...]] = {}
    for table_id, texts in found.tables.items():
        keys = []
        for n, key in enumerate(texts):
            try:
                keys.append(Ed25519PublicKey.from_public_bytes(data(key)))
            except ValueError as error:
                raise KeyFileError(
                    f"{source}: table {table_id!r}, key {n + 1} ({key}): not an Ed25519 public "
                    f"key ({error}); copy it again from the output of `croupier keys new`"
                ) from None
        if len(set(texts)) != len(texts):
            raise KeyFileError(f"{source}: table {table_id!r} lists a key twice; remove the repeat")
        tables[table_id] = tuple(keys)
    return tables


def _where(raw: bytes, error: msgspec.ValidationError) -> str:
    """The error of a file that is JSON but not a keys file, naming the table at fault."""
    tables = msgspec.json.decode(raw)
    tables = tables.get("tables") if isinstance(tables, dict) else None
    if isinstance(tables, dict):
        for table_id, keys in tables.items():
            try:
                msgspec.convert(keys, _KEY_LIST)
            except msgspec.ValidationError as problem:
                return f"table {table_id!r}: {problem}"
    return str(error)


def load(path: str | os.PathLike[str] | None) -> TableKeys:
    """The table keys of a file (none for None); KeyFileError says what to fix."""
    if path is None or str(path) == "":
        return NO_KEYS
    try:
        raw = Path(path).read_bytes()
    except OSError as error:
        raise KeyFileError(
            f"table keys file {str(path)!r} (CROUPIER_TABLE_KEYS_FILE) cannot be read: "
            f"{error.strerror}; create it with `croupier keys new TABLE --keys-file {path}`, or "
            "unset CROUPIER_TABLE_KEYS_FILE to read every table without signatures"
        ) from None
    return parse(raw, f"table keys file {str(path)!r}")


def add_public_key(path: Path, table_id: str, key: Ed25519PublicKey) -> None:
    """Add a table's public key to a table keys file (created if missing), keeping the others."""
    found = TableKeysFile()
    if path.exists():
        raw = path.read_bytes()
        parse(raw, f"table keys file {str(path)!r}")
        found = _KEYS_FILE.decode(raw)
    tables = {name: list(keys) for name, keys in found.tables.items()}
    tables.setdefault(table_id, []).append(public_text(key))
    body = msgspec.json.format(_ENCODER.encode(TableKeysFile(tables=tables)), indent=2) + b"\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(body)
    temporary.replace(path)


def private_file(table_id: str, key: Ed25519PrivateKey) -> bytes:
    """The text of a table's private key file."""
    seed = key.private_bytes_raw()
    record = PrivateKeyFile(
        table_id=table_id, private_key=text(seed), public_key=public_text(key.public_key())
    )
    return msgspec.json.format(_ENCODER.encode(record), indent=2) + b"\n"


def read_private(path: str | os.PathLike[str]) -> tuple[str, Ed25519PrivateKey]:
    """The table and the signing key of a private key file written by `croupier keys new`."""
    where = f"private key file {str(path)!r}"
    try:
        found = _PRIVATE_FILE.decode(Path(path).read_bytes())
    except OSError as error:
        raise KeyFileError(
            f"{where} cannot be read: {error.strerror}; make one with `croupier keys new TABLE`"
        ) from None
    except msgspec.DecodeError as error:
        raise KeyFileError(
            f"{where}: {error}; expected the JSON `croupier keys new` writes"
        ) from None
    key = private_key(data(found.private_key))
    if public_text(key.public_key()) != found.public_key:
        raise KeyFileError(
            f"{where}: its public_key is not the private key's; the file was edited or damaged"
        )
    return found.table_id, key
