"""Server time of every owner page with 10,000 tasks (and many of everything else).

    .venv/bin/python benchmarks/pages.py [--runs 15] [--sqlite]

Sets up a throwaway database (PostgreSQL at 127.0.0.1:5432 when it answers, else SQLite) with
10,000 tasks in 20 projects, 10,000 notes, 2,000 memories, 2,000 automations, 2,000
notifications, 500 binned tasks, 2,000 changes and a 200-message conversation, then requests
each page through Django's full request path in this process (middleware, session, view,
template) as the signed-in owner and prints the median and p95 server time and the query count.
Target: every page's p95 at most 100 ms.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._database import analyze, drop_database, start_django  # noqa: E402
from benchmarks._results import figure  # noqa: E402

TARGET_MS = 100.0
PAGES = [
    "/",
    "/c/{conversation}/",
    "/tasks/",
    "/tasks/?status=all&project={project}",
    "/projects/",
    "/notes/",
    "/notes/{note}/",
    "/memories/",
    "/automations/",
    "/notifications/",
    "/approvals/",
    "/changes/",
    "/bin/",
    "/settings/",
    "/usage/",
    "/backup/",
]


def _seed() -> dict[str, int]:
    import datetime as dt

    from django.utils import timezone

    from agent.models import Conversation, Message
    from automations.models import Automation
    from memory.models import Memory
    from talorys.history.models import Change
    from talorys.notifications.models import Notification
    from talorys.workspace.models import Note, Project, Task

    now = timezone.now()
    projects = Project.objects.bulk_create(Project(name=f"Project {n}") for n in range(20))
    Task.objects.bulk_create(
        Task(
            title=f"Task {n}: water the garden beds",
            project=projects[n % 20],
            due_at=now + dt.timedelta(hours=n - 5000) if n % 3 else None,
        )
        for n in range(10_000)
    )
    Task.objects.bulk_create(
        Task(title=f"Binned task {n}", deleted_at=now - dt.timedelta(days=n % 29))
        for n in range(500)
    )
    notes = Note.objects.bulk_create(
        Note(title=f"Note {n}", content=f"## Note {n}\n\nAbout project {n % 40}. " * 20)
        for n in range(10_000)
    )
    Memory.objects.bulk_create(Memory(text=f"Fact number {n} about the owner") for n in range(2000))
    Automation.objects.bulk_create(
        Automation(
            name=f"Routine {n}",
            kind="reminder",
            message="Look at today's tasks",
            schedule={"type": "daily", "time": "07:30"},
            next_run_at=now + dt.timedelta(minutes=n),
        )
        for n in range(2000)
    )
    Notification.objects.bulk_create(
        Notification(title=f"Reminder {n}", body="Look at today's tasks") for n in range(2000)
    )
    conversation = Conversation.objects.create(title="Long chat")
    messages = Message.objects.bulk_create(
        Message(
            conversation=conversation,
            role="user" if n % 2 == 0 else "assistant",
            content=f"Message {n} about **the weekend plans**, the garden and a few errands.",
        )
        for n in range(200)
    )
    Change.objects.bulk_create(
        Change(
            kind="note",
            object_id=notes[n].pk,
            action="update",
            title=f"Note {n}",
            source="chat",
            conversation_id=conversation.pk,
            message_id=messages[-1].pk,
            before={"content": "old text"},
            after={"content": "new text"},
        )
        for n in range(2000)
    )
    analyze()
    return {"conversation": conversation.pk, "project": projects[0].pk, "note": notes[0].pk}


def _measure(ids: dict[str, int], runs: int) -> bool:
    from django.contrib.auth import get_user_model
    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    user = get_user_model().objects.create_superuser("owner", password="bench-password-1")
    client = Client()
    client.force_login(user)
    print(f"{'page':42} {'p50 ms':>8} {'p95 ms':>8} {'queries':>8}")
    ok = True
    worst: tuple[float, str] = (0.0, "")
    for template in PAGES:
        path = template.format(**ids)
        timings = []
        for n in range(runs + 2):  # two warm-ups: templates compile, caches fill
            reset_queries()
            with CaptureQueriesContext(connection) as queries:
                began = time.perf_counter()
                response = client.get(path)
                elapsed = (time.perf_counter() - began) * 1000
            if response.status_code != 200:
                print(f"{path:42} answered {response.status_code}")
                ok = False
                break
            if n >= 2:
                timings.append(elapsed)
        else:
            p50 = statistics.median(timings)
            p95 = sorted(timings)[min(len(timings) - 1, round(0.95 * (len(timings) - 1)))]
            flag = "" if p95 <= TARGET_MS else "  MISSES"
            ok = ok and p95 <= TARGET_MS
            print(f"{path:42} {p50:8.1f} {p95:8.1f} {len(queries.captured_queries):8}{flag}")
            worst = max(worst, (p95, path))
    figure(
        "pages",
        "slowest owner page, p95 server time",
        worst[0],
        "ms",
        target=TARGET_MS,
        database=connection.vendor,
        note=worst[1],
    )
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--sqlite", action="store_true", help="use SQLite even if PostgreSQL is up")
    options = parser.parse_args()

    _database_url, pg_name = start_django(options.sqlite)
    logging.getLogger("django.request").setLevel(logging.ERROR)
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connections

    settings.ALLOWED_HOSTS = ["testserver", *settings.ALLOWED_HOSTS]
    try:
        call_command("migrate", verbosity=0)
        ids = _seed()
        engine = connections["default"].vendor
        print(f"database: {engine}; 10,000 tasks, 10,000 notes, 2,000 of memories, automations,")
        print("notifications and changes, 500 binned tasks, a 200-message conversation")
        ok = _measure(ids, options.runs)
        print(f"every page's p95 at most {TARGET_MS:.0f} ms: {'yes' if ok else 'NO'}")
    finally:
        connections.close_all()
        if pg_name:
            drop_database(pg_name)


if __name__ == "__main__":
    main()
