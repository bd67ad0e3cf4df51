"""The figures a benchmark reports to `make bench` (benchmarks/run.py), each beside its floor.

A script prints its own report as always, and also calls ``figure(...)`` for each number that has
a target: when ``TALORYS_BENCH_RESULTS`` names a file (run.py sets it), one JSON object per line
is appended there; otherwise nothing happens, so every script still runs on its own.

A floor is the same work without Talorys in the way, measured in the same run: a direct request
to the same fake model server, a numpy brute-force top-k, a bare Django JSON view in the same
server. The ratio is the figure over its floor.
"""

from __future__ import annotations

import json
import os
from typing import Any

RESULTS_ENV = "TALORYS_BENCH_RESULTS"


def figure(
    benchmark: str,
    name: str,
    value: float,
    unit: str,
    *,
    floor: float | None = None,
    floor_name: str = "",
    target: float | None = None,
    better: str = "lower",
    database: str = "",
    note: str = "",
) -> dict[str, Any]:
    """Record one figure; ``better`` says which way meets the target ("lower" or "higher")."""
    met = None
    if target is not None:
        met = value <= target if better == "lower" else value >= target
    row: dict[str, Any] = {
        "benchmark": benchmark,
        "name": name,
        "value": round(value, 3),
        "unit": unit,
        "floor": None if floor is None else round(floor, 3),
        "floor_name": floor_name,
        "ratio": round(value / floor, 2) if floor else None,
        "target": target,
        "better": better,
        "met": met,
        "database": database,
        "note": note,
    }
    path = os.environ.get(RESULTS_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(row) + "\n")
    return row
