"""A process's freed C heap goes back to the system when released (`services.heap`): the
resident memory a restore's buffers left behind does not stay."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, os
from services import heap

def rss_mib():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

kept, freed = [], []
for n in range(200_000):  # 200 MB of 1,000-byte buffers, one in a hundred kept: a fragmented heap
    (kept if n % 100 == 0 else freed).append(os.urandom(1) * 1000)
filled = rss_mib()
del freed
before = rss_mib()
asked = heap.release()
print(json.dumps({"filled": filled, "before": before, "after": rss_mib(), "asked": asked}))
"""


def test_buffers_freed_between_kept_ones_leave_the_resident_memory_once_released() -> None:
    probe = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    found = json.loads(probe.stdout)
    assert found["asked"] is True  # glibc, as on every machine croupier runs on
    assert found["filled"] > 180
    assert found["before"] > 180, "freed but not yet released, the memory stays resident"
    assert found["after"] < found["before"] - 150
