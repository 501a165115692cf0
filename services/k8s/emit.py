"""A YAML emitter for the plain data of manifests: mappings, lists, strings, integers, booleans.

Every string is written double-quoted (JSON escapes are valid YAML), so a value such as "-1",
"true" or "0.1" stays a string, as Kubernetes and Strimzi expect of topic configuration.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

Data = Mapping[str, "Data"] | Sequence["Data"] | str | int | bool | None

_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-/]*$")


def documents(docs: Sequence[Data], header: str = "") -> str:
    """A multi-document YAML stream: `header` as comment lines, then each document after `---`."""
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    for doc in docs:
        lines.append("---")
        lines.extend(_node(doc, 0))
    return "\n".join(lines) + "\n"


def _scalar(value: Data) -> str:
    match value:
        case None:
            return "null"
        case bool():
            return "true" if value else "false"
        case int():
            return str(value)
        case str():
            return json.dumps(value, ensure_ascii=False)
    raise TypeError(f"not a scalar: {value!r}")


def _key(key: str) -> str:
    reserved = key.lower() in {"true", "false", "yes", "no", "on", "off", "null", "y", "n"}
    return key if _PLAIN_KEY.match(key) and not reserved else json.dumps(key)


def _node(value: Data, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(value, Mapping):
        if not value:
            return [pad + "{}"]
        lines: list[str] = []
        for key, item in value.items():
            if _compound(item):
                lines.append(f"{pad}{_key(key)}:")
                lines.extend(_node(item, indent + 2))
            else:
                lines.append(f"{pad}{_key(key)}: {_inline(item)}")
        return lines
    if isinstance(value, Sequence) and not isinstance(value, str):
        if not value:
            return [pad + "[]"]
        lines = []
        for item in value:
            if _compound(item):
                inner = _node(item, indent + 2)
                lines.append(f"{pad}- {inner[0].lstrip()}")
                lines.extend(inner[1:])
            else:
                lines.append(f"{pad}- {_inline(item)}")
        return lines
    return [pad + _scalar(value)]


def _compound(value: Data) -> bool:
    return isinstance(value, Mapping | list | tuple) and len(value) > 0


def _inline(value: Data) -> str:
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, list | tuple):
        return "[]"
    return _scalar(value)
