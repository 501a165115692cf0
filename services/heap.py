"""The C heap's free memory given back to the system after a burst (glibc's `malloc_trim`).

A task's restore reads its state partition through librdkafka, whose fetch buffers (tens of MiB)
and the state's raw records are freed once the task is built. glibc keeps what was freed in its
arenas for the next allocation and does not give it back to the system unless asked, so a
worker's resident memory would stay at the high-water mark of its largest restore, and step up at
each takeover or rebuild (docs/DESIGN.md, "Memory after a restore"). Elsewhere than glibc there
is nothing to ask, and `release` does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any


@functools.cache
def _libc() -> Any | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return libc


def release() -> bool:
    """Give the C heap's free pages back to the system; whether there was a glibc to ask."""
    libc = _libc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True
