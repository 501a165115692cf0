"""The C heap: kept between batches (glibc's `mallopt`), given back after a burst (`malloc_trim`).

A task's restore reads its state partition through librdkafka, whose fetch buffers (tens of MiB)
and the state's raw records are freed once the task is built. glibc keeps what was freed in its
arenas for the next allocation and does not give it back to the system unless asked, so a
worker's resident memory would stay at the high-water mark of its largest restore, and step up at
each takeover or rebuild (docs/DESIGN.md, "Memory after a restore"). Elsewhere than glibc there
is nothing to ask, and `release` does nothing.

Between batches it is the other way round: each batch allocates and frees megabytes (its inputs,
its journal's records, what it hands librdkafka), and glibc, left to its defaults, serves the
biggest of these with fresh pages and gives the freed top of its heap back at once, so that each
batch pays again for the pages the last one returned. `steady` has it keep that much for the next
batch (docs/DESIGN.md, "The C heap between batches").
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any, Final

M_TRIM_THRESHOLD: Final = -1
M_TOP_PAD: Final = -2
M_MMAP_THRESHOLD: Final = -3
STEADY: Final = {
    M_MMAP_THRESHOLD: 32 * 1024 * 1024,
    M_TRIM_THRESHOLD: 64 * 1024 * 1024,
    M_TOP_PAD: 16 * 1024 * 1024,
}
"""glibc's `mallopt` parameters for a process that works in batches: blocks up to 32 MiB come
from the heap, and up to 64 MiB of its freed top stays for the next batch (16 MiB asked ahead)."""


@functools.cache
def _libc() -> Any | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        trim, option = libc.malloc_trim, libc.mallopt
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    option.argtypes = [ctypes.c_int, ctypes.c_int]
    option.restype = ctypes.c_int
    return libc


def release() -> bool:
    """Give the C heap's free pages back to the system; whether there was a glibc to ask."""
    libc = _libc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True


def steady() -> bool:
    """Keep freed heap for the next batch (`STEADY`); whether glibc took every setting. `release`
    still gives it all back when asked."""
    libc = _libc()
    if libc is None:
        return False
    return all(libc.mallopt(param, value) == 1 for param, value in STEADY.items())
