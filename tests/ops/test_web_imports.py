"""What a web process loads before its first request: the libraries only a few requests use are
imported by those requests, not by every process (each costs its megabytes in every web
process: benchmarks/load.py reports the web's RSS)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[2]
# The MCP SDK and its web stack (/mcp), the date parser (a date in words), the iCalendar
# library (the calendar feed).
ON_DEMAND = ("mcp", "dateparser", "icalendar")

PROBE = """
import json, sys
import django
django.setup()
import config.asgi, config.urls
from django.urls import get_resolver
get_resolver().url_patterns
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


def test_a_started_web_process_has_not_loaded_what_only_some_requests_use(tmp_path):
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "TALORYS_DATA_DIR": str(tmp_path),
    }
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout.splitlines()[-1]))

    assert "django" in loaded and "ninja" in loaded  # the probe did load the web
    assert loaded.isdisjoint(ON_DEMAND), sorted(loaded & set(ON_DEMAND))
