"""Search over the owner's files: ``files.selectors.files_search`` (recall's kind ``file``, as
/api/search?kinds=files and the search_files tool read it) over 10,000 passages.

    .venv/bin/python benchmarks/files_search.py [--files 100] [--passages 100] [--queries 200] [--sqlite]

A throwaway database (PostgreSQL at 127.0.0.1:5432 when it answers, else SQLite;
benchmarks/_database.py, dropped at the end) holds ``--files`` ready files of ``--passages``
passages each (about 700 characters, words drawn from a fixed vocabulary of 2,000 made-up
words, so every query matches a few hundred passages), indexed by ``memory.services.reindex()``
with semantic recall off (keyword ranking: the default install adds vectors, benchmarks/recall.py
measures those). A file's passages are indexed when its extraction ends (files/services.py), so a
search's lazy pass never re-reads them. Each query is 2-3 words of that vocabulary; after 10
warm-up calls, ``files_search(query=q, limit=10)`` is timed ``--queries`` times, with the lazy
pass of the index (nothing changed) included, as a request pays it. Printed: p50, p90 and p99
wall time. Target: p50 at most 15 ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._database import analyze, drop_database, start_django  # noqa: E402
from benchmarks._results import figure  # noqa: E402

TARGET_MS = 15.0
SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "sa",
    "te",
    "vo",
    "zi",
    "pa",
    "do",
    "fe",
    "gu",
    "hi",
    "ja",
]


def vocabulary(size: int, rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def seed(files: int, passages: int, words: list[str], rng: random.Random) -> None:

    from files.models import File, FilePassage
    from memory import services as memory_services
    from talorys.owner.services.settings import owner_settings_update

    owner_settings_update(semantic_enabled=False)
    made = File.objects.bulk_create(
        File(
            name=f"report-{n}.pdf",
            content_type="application/pdf",
            size=1000,
            sha256=f"{n:064x}",
            status=File.Status.READY,
            pages=passages,
        )
        for n in range(files)
    )
    FilePassage.objects.bulk_create(
        (
            FilePassage(
                file=file,
                index=index,
                page=index + 1,
                text=" ".join(rng.choice(words) for _ in range(110)),
            )
            for file in made
            for index in range(passages)
        ),
        batch_size=2000,
    )
    start = time.perf_counter()
    report = memory_services.reindex()
    print(f"indexed {report.kinds.get('file', 0)} passages in {time.perf_counter() - start:.1f} s")
    analyze()


def measure(queries: int, words: list[str], rng: random.Random) -> list[float]:
    from files.selectors import files_search

    asked = [" ".join(rng.sample(words, rng.randint(2, 3))) for _ in range(queries + 10)]
    for query in asked[:10]:
        files_search(query=query, limit=10)
    times = []
    found = 0
    for query in asked[10:]:
        start = time.perf_counter()
        hits = files_search(query=query, limit=10)
        times.append((time.perf_counter() - start) * 1000)
        found += bool(hits)
    print(f"{found} of {queries} queries found passages")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--passages", type=int, default=100)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--sqlite", action="store_true")
    options = parser.parse_args()
    _, pg_name = start_django(options.sqlite)
    from django.core.management import call_command
    from django.db import connection, connections

    try:
        call_command("migrate", interactive=False, verbosity=0)
        rng = random.Random(7)
        words = vocabulary(2000, rng)
        seed(options.files, options.passages, words, rng)
        times = sorted(measure(options.queries, words, rng))
        p50 = statistics.median(times)
        p90, p99 = times[int(0.9 * len(times))], times[int(0.99 * len(times)) - 1]
        verdict = "met" if p50 <= TARGET_MS else "MISSED"
        print(
            f"database: {connection.vendor}; {options.files * options.passages} passages; "
            f"files_search p50 {p50:.1f} ms, p90 {p90:.1f} ms, p99 {p99:.1f} ms "
            f"(target p50 {TARGET_MS:g} ms: {verdict})"
        )
        figure(
            "files_search",
            "p50 ms",
            p50,
            "ms",
            target=TARGET_MS,
            database=connection.vendor,
            note=f"{options.files * options.passages} passages, keyword",
        )
    finally:
        connections.close_all()
        if pg_name:
            drop_database(pg_name)


if __name__ == "__main__":
    main()
