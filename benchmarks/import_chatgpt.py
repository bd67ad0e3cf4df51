"""A ChatGPT export of about 50 MB: time and peak memory of its import, and recall's catch-up.

    .venv/bin/python benchmarks/import_chatgpt.py [--sqlite] [--mb 50]

Writes a conversations.json of ``--mb`` MiB (conversations of 20 messages of varied words, each
with a hidden system node and a regenerated answer, as tests/imports/exports.py shapes them),
then in a fresh subprocess imports it (``import_file``, the file read from disk as the API
does), indexes what came in (``import_index``, words; vectors are the catch-up's), then
reverts it (``import_revert``: everything it added to the bin). Prints the import's wall time
and its peak RSS above idle (VmHWM less the resident size once Django started and connected,
the peak reset there), the indexing's time and the revert's. The bound: 150 MB above
idle.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._database import bench_environment, drop_database  # noqa: E402
from benchmarks._memory import idle_mb, status_mb  # noqa: E402

BOUND_MB = 150
MESSAGES = 20
WORDS = [
    "garden",
    "bean",
    "lettuce",
    "invoice",
    "tax",
    "bike",
    "bread",
    "sourdough",
    "proof",
    "river",
    "meeting",
    "travel",
    "budget",
    "python",
    "deploy",
    "server",
    "queue",
    "recipe",
    "course",
    "lecture",
    "chapter",
    "novel",
    "guitar",
    "chord",
    "tempo",
    "running",
    "marathon",
    "knee",
    "physio",
    "apartment",
    "lease",
    "landlord",
    "heating",
    "boiler",
    "winter",
    "coat",
    "market",
    "price",
]


def _conversation(rng: random.Random, n: int) -> dict:
    t0 = 1_600_000_000 + n * 3600
    mapping: dict[str, dict] = {
        "root": {"id": "root", "message": None, "parent": None, "children": []}
    }
    parent = "root"
    for index in range(MESSAGES):
        ident = f"{n}-{index}"
        role = "user" if index % 2 == 0 else "assistant"
        text = " ".join(rng.choices(WORDS, k=rng.randint(60, 260)))
        mapping[ident] = {
            "id": ident,
            "parent": parent,
            "children": [],
            "message": {
                "id": ident,
                "author": {"role": role, "name": None, "metadata": {}},
                "create_time": t0 + index * 30,
                "content": {"content_type": "text", "parts": [text]},
                "status": "finished_successfully",
                "metadata": {},
                "recipient": "all",
            },
        }
        mapping[parent]["children"].append(ident)
        parent = ident
    return {
        "title": " ".join(rng.choices(WORDS, k=4)),
        "create_time": t0,
        "update_time": t0 + MESSAGES * 30,
        "mapping": mapping,
        "current_node": parent,
        "conversation_id": f"conv-{n}",
        "id": f"conv-{n}",
    }


def _build(path: Path, megabytes: int) -> int:
    rng = random.Random(7)
    target = megabytes * 1024 * 1024
    count = 0
    with path.open("w") as out:
        out.write("[")
        while out.tell() < target:
            out.write(("," if count else "") + json.dumps(_conversation(rng, count)))
            count += 1
        out.write("]")
    return count


def _child(path: str) -> None:
    import django

    django.setup()
    from django.db import connection

    from imports.services import import_file, import_index, import_revert

    connection.ensure_connection()
    idle = idle_mb()
    start = time.perf_counter()
    with open(path, "rb") as source:
        report = import_file(stream=source, name="conversations.json")
    imported = time.perf_counter() - start
    peak = status_mb("VmHWM") - idle
    start = time.perf_counter()
    run = import_index(import_id=report["id"] or 0)
    indexed = time.perf_counter() - start
    start = time.perf_counter()
    import_revert(import_id=run.pk)
    reverted = time.perf_counter() - start
    print(
        json.dumps(
            {
                "seconds": imported,
                "above_idle_mb": peak,
                "index_seconds": indexed,
                "revert_seconds": reverted,
                "added": report["added"],
                "indexed": run.indexed,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sqlite", action="store_true", help="use SQLite even if PostgreSQL is up")
    parser.add_argument("--mb", type=int, default=50, help="size of the export")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        _child(options.child)
        return
    data_dir, pg_name = bench_environment(options.sqlite, LOG_LEVEL="WARNING")
    try:
        path = Path(data_dir) / "conversations.json"
        count = _build(path, options.mb)
        import django
        from django.core.management import call_command
        from django.db import connections

        django.setup()
        call_command("migrate", verbosity=0)
        vendor = connections["default"].vendor
        connections.close_all()
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(path)],
            env=dict(os.environ),
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        result = json.loads(done.stdout.strip().splitlines()[-1])
        size = path.stat().st_size / 1024 / 1024
        print(f"database: {vendor}; a {size:.1f} MiB export of {count} conversations")
        print(
            f"  import   {result['seconds']:6.1f} s  {result['above_idle_mb']:6.1f} MB above idle (bound {BOUND_MB})"
        )
        print(f"  index    {result['index_seconds']:6.1f} s  {result['indexed']} messages (words)")
        print(f"  revert   {result['revert_seconds']:6.1f} s  (everything it added to the bin)")
        print(f"  added    {result['added']}")
    finally:
        if pg_name:
            drop_database(pg_name)


if __name__ == "__main__":
    main()
