"""talorys/lib/malloc.py: a process of Talorys gives freed large blocks back to the system, even
after a larger one was freed (glibc otherwise keeps them in its heap)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[2]

# Frees a 32 MB block (which raises glibc's threshold), then makes a hundred 1 MB blocks and
# frees all but the last: the MB of RSS they leave behind.
PROBE = """
import sys
import numpy as np
if sys.argv[1] == "django":
    import django
    django.setup()
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
big = np.ones(8_000_000, np.float32)
del big
before = rss()
blocks = [np.ones(250_000, np.float32) for _ in range(100)]
del blocks[:-1]
print(rss() - before)
"""


def _left_behind(how: str, tmp_path: Path) -> float:
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "talorys.settings",
        "TALORYS_DATA_DIR": str(tmp_path),
    }
    env.pop("MALLOC_MMAP_THRESHOLD_", None)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, how], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return float(done.stdout.split()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc only")
def test_freed_blocks_go_back_to_the_system_in_a_process_of_talorys(tmp_path):
    assert _left_behind("plain", tmp_path) > 50  # glibc's own behaviour: the probe can tell
    assert _left_behind("django", tmp_path) < 10
