"""What reading a list's page as rows saves (talorys/web/schema_rows.py, ``paginate_rows``):
the same list views through the whole stack, once read as rows and once through ninja's own
``@paginate(Pagination)``, which builds a model instance per row and validates it with the
output schema. A list keeps the rows only while they are at least 1.5 times as fast
(``KEEP_RATIO``) on PostgreSQL and on SQLite.

    .venv/bin/python benchmarks/list_rows.py [--requests 100] [--sqlite]

A throwaway database (PostgreSQL at 127.0.0.1:5432 when it answers, else SQLite;
benchmarks/_database.py, dropped at the end) holds the owner, 10,000 tasks in 20 projects (as
benchmarks/api_throughput.py seeds them), and 10,000 each of notes, projects, memories, one
memory's revisions and the model's changes (each with its before and after). Both variants are
requested through Django's test client with the owner's session, so each request crosses the
same middleware, the same ninja API (its auth, its parameters) and the same view function: the
bare view under ``paginate_rows`` at /api/rows/ and under ``@paginate(Pagination)`` at
/api/plain/, whichever the API uses (the API's path prefix, so the middleware treats them alike). After checking that both answer the same bytes, each page
is requested ``--requests`` times per variant, the two in turn, in 3 runs; printed: the median
of the 3 runs' median latency (wall) and CPU time of this process per request (the database's
work is the same for both and not in it), how many times faster the rows are (ninja / rows),
and each run's wall medians.
"""

from __future__ import annotations

import argparse
import inspect
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._database import analyze, drop_database, start_django  # noqa: E402
from benchmarks._results import figure  # noqa: E402

TASKS = 10_000
PROJECTS = 20
ROWS = 10_000  # notes, memories and changes
PAGES = (
    "tasks?limit=100",
    "notes?limit=100",
    "memories?limit=100",
    "changes?limit=100",
    "projects?limit=100",
    "memories/{memory}/history?limit=100",
    "tasks?limit=500",
)
RUNS = 3
# How much faster than ninja's own path the rows must be, through the whole stack, to be kept.
KEEP_RATIO = 1.5


def seed() -> None:
    import datetime as dt

    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.utils import timezone

    from memory.models import Memory, MemoryRevision
    from talorys.history.models import Change
    from talorys.workspace.models import Note, Project, Task

    call_command("migrate", interactive=False, verbosity=0)
    get_user_model().objects.create_superuser(username="owner", password="list rows bench")
    now = timezone.now()
    projects = Project.objects.bulk_create(Project(name=f"Project {n}") for n in range(PROJECTS))
    Task.objects.bulk_create(
        (
            Task(
                title=f"Task {n}: water the garden beds",
                project=projects[n % PROJECTS],
                due_at=now + dt.timedelta(hours=n - TASKS // 2) if n % 3 else None,
            )
            for n in range(TASKS)
        ),
        batch_size=1000,
    )
    Note.objects.bulk_create(
        (Note(title=f"Note {n}", content="Minutes of the meeting. " * 20) for n in range(ROWS)),
        batch_size=1000,
    )
    Memory.objects.bulk_create(
        (
            Memory(
                text=f"Ana's sister {n} lives in Porto", valid_from=now.date() if n % 2 else None
            )
            for n in range(ROWS)
        ),
        batch_size=1000,
    )
    first = Memory.objects.order_by("id").first()
    MemoryRevision.objects.bulk_create(
        (
            MemoryRevision(memory=first, action="update", text=f"Ana's sister {n} lives in Porto")
            for n in range(ROWS)
        ),
        batch_size=1000,
    )
    Project.objects.bulk_create(
        (Project(name=f"More {n}", description="Rooms and the garden") for n in range(ROWS)),
        batch_size=1000,
    )
    Change.objects.bulk_create(
        (
            Change(
                kind="task",
                object_id=n,
                action="update",
                title=f"Task {n}",
                before={"title": f"Task {n}", "status": "open"},
                after={"title": f"Task {n}", "status": "done"},
                source="chat",
                conversation_id=1,
                message_id=n,
            )
            for n in range(ROWS)
        ),
        batch_size=1000,
    )
    analyze()


def both_urls() -> Any:
    """A URLconf with each list twice more, its bare view function under ``paginate_rows`` at
    /api/rows/ and under ninja's ``@paginate(Pagination)`` at /api/plain/, whichever of the two
    the API itself uses for it."""
    from django.urls import path
    from ninja import Router
    from ninja.pagination import paginate

    import config.urls
    from config.openapi import TalorysAPI
    from memory import api as memory_api
    from memory.schemas import MemoryOut, MemoryRevisionOut
    from talorys.accounts.auth import owner_auth
    from talorys.history import api as history_api
    from talorys.history.schemas import ChangeOut
    from talorys.web.pagination import Pagination, paginate_rows
    from talorys.workspace import api
    from talorys.workspace.schemas import NoteOut, ProjectOut, TaskOut

    lists = (
        ("tasks", api.task_list, TaskOut),
        ("notes", api.note_list, NoteOut),
        ("projects", api.project_list, ProjectOut),
        ("memories", memory_api.memory_list, MemoryOut),
        ("memories/{int:memory_id}/history", memory_api.memory_history, MemoryRevisionOut),
        ("changes", history_api.change_list, ChangeOut),
    )
    urls = []
    for prefix in ("rows", "plain"):
        router = Router()
        for name, view, schema in lists:
            # inspect.unwrap: the view function under the decorator (both keep __wrapped__).
            paged = paginate_rows(schema) if prefix == "rows" else paginate(Pagination)
            router.get(f"/{name}", response=list[schema])(paged(inspect.unwrap(view)))
        both = TalorysAPI(auth=owner_auth, urls_namespace=prefix)
        both.add_router("", router)
        urls.append(path(f"api/{prefix}/", both.urls))

    class Urls:
        urlpatterns = [*urls, *config.urls.urlpatterns]

    return Urls


def one_run(get: Callable[[str], Any], urls: tuple[str, str], requests: int) -> list[float]:
    """Median wall and CPU milliseconds per request of each URL, requested in turn (so that a
    load from elsewhere on the machine falls on both alike): [wall 1, wall 2, cpu 1, cpu 2]."""
    walls: list[list[float]] = [[], []]
    cpus: list[list[float]] = [[], []]
    for _ in range(requests):
        for index, url in enumerate(urls):
            wall, cpu = time.perf_counter(), time.process_time()
            response = get(url)
            walls[index].append(time.perf_counter() - wall)
            cpus[index].append(time.process_time() - cpu)
            if response.status_code != 200:
                raise SystemExit(f"{url}: {response.status_code} {response.content[:200]!r}")
    return [statistics.median(times) * 1000 for times in (*walls, *cpus)]


def measure(requests: int) -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client, override_settings

    client = Client()
    client.force_login(get_user_model().objects.get())
    from memory.models import Memory

    memory = Memory.objects.order_by("id").first()
    with override_settings(ROOT_URLCONF=both_urls()):
        for page in PAGES:
            page = page.format(memory=getattr(memory, "pk", 0))
            urls = (f"/api/rows/{page}", f"/api/plain/{page}")
            if client.get(urls[0]).content != client.get(urls[1]).content:
                raise SystemExit(f"{page}: the two answers differ")
            one_run(client.get, urls, 5)  # warm up
            report(page, [one_run(client.get, urls, requests) for _ in range(RUNS)])


def report(page: str, runs: list[list[float]]) -> None:
    from django.db import connection

    rows, plain, rows_cpu, plain_cpu = (statistics.median(run[n] for run in runs) for n in range(4))
    # Kept only while it pays for its code: at least 1.5 times as fast as ninja's own path.
    figure(
        "list_rows",
        f"GET /api/{page}, wall per request",
        rows,
        "ms",
        floor=plain,
        floor_name="ninja's @paginate on the same view",
        target=plain / KEEP_RATIO,
        database=connection.vendor,
    )
    each = ", ".join(f"{run[0]:.1f}/{run[1]:.1f}" for run in runs)
    print(
        f"  GET /api/{page:19} wall: rows {rows:6.2f} ms, ninja {plain:6.2f} ms, "
        f"x{plain / rows:4.2f}; CPU: rows {rows_cpu:6.2f} ms, ninja {plain_cpu:6.2f} ms, "
        f"x{plain_cpu / rows_cpu:4.2f} (wall per run, rows/ninja: {each})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--sqlite", action="store_true")
    options = parser.parse_args()
    _, pg_name = start_django(options.sqlite)
    from django.db import connection, connections

    try:
        seed()
        print(
            f"database: {connection.vendor}; median latency of {options.requests} requests "
            f"per page and variant, median of {RUNS} runs"
        )
        measure(options.requests)
    finally:
        connections.close_all()
        if pg_name:
            drop_database(pg_name)


if __name__ == "__main__":
    main()
