"""talorys/embedder/malloc.py: memory freed after a burst of large temporaries goes back to the system
(glibc otherwise keeps it in its heap once a larger block was freed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[2]

# Frees a 32 MB block (which raises glibc's threshold), makes a hundred 1 MB blocks and frees all
# but the last: the MB of RSS they leave behind, then after freed_memory_returned() if asked.
PROBE = """
import sys
import numpy as np
from talorys.embedder.malloc import freed_memory_returned
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
big = np.ones(8_000_000, np.float32)
del big
before = rss()
blocks = [np.ones(250_000, np.float32) for _ in range(100)]
del blocks[:-1]
if sys.argv[1] == "returned":
    assert freed_memory_returned()
print(rss() - before)
"""


def _left_behind(how: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, how], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return float(done.stdout.split()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc only")
def test_freed_temporaries_go_back_to_the_system():
    assert _left_behind("kept") > 50  # glibc's own behaviour: the probe can tell
    assert _left_behind("returned") < 10
