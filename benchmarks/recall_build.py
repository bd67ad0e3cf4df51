"""Helpers for benchmarks/recall.py: the scratch database, N synthetic items, random vectors, a
fake embedder, and the recall set (benchmarks/recall_set.py) loaded as conversations.

``boot`` sets Django up; everything else needs it set up. Nothing here ranks anything: the
benchmark measures memory.selectors.recall_items and memory.recall.engine as they are.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import os
import random
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.recall_set import RecallSet  # noqa: E402

DIM = 384
FAKE_MODEL = "bench:random-unit-384"
MESSAGES_PER_CONVERSATION = 200
VECTOR_BATCH = 5000


@dataclass
class Scratch:
    url: str
    data_dir: str
    pg_name: str | None  # the PostgreSQL database made here (dropped by ``close``)


def boot(database_url: str | None) -> Scratch:
    """Django on a fresh database (SQLite in a temporary directory unless ``database_url``
    names a PostgreSQL database, which must not exist yet: it is made here and dropped after),
    migrated."""
    data_dir = tempfile.mkdtemp(prefix="talorys-recall-bench-")
    url = database_url or f"sqlite:///{data_dir}/recall.sqlite3"
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": url,
            "TALORYS_DATA_DIR": data_dir,
        }
    )
    for name in ("REDIS_URL", "TALORYS_EMBEDDINGS_BASE_URL", "TALORYS_EMBEDDINGS_MODEL"):
        os.environ.pop(name, None)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    pg_name = None
    if connection.vendor == "postgresql":
        name = str(connection.settings_dict["NAME"])
        with connection._nodb_cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
            if cursor.fetchone():
                shutil.rmtree(data_dir, ignore_errors=True)
                raise SystemExit(f"database {name!r} exists: drop it, or name one that does not")
            cursor.execute(f"CREATE DATABASE {connection.ops.quote_name(name)}")
        pg_name = name
    call_command("migrate", verbosity=0)
    return Scratch(url, data_dir, pg_name)


def close(scratch: Scratch) -> None:
    from django.db import connection, connections

    connections.close_all()
    if scratch.pg_name:
        if hasattr(connection, "close_pool"):
            connection.close_pool()
        with connection._nodb_cursor() as cursor:
            name = connection.ops.quote_name(scratch.pg_name)
            cursor.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    shutil.rmtree(scratch.data_dir, ignore_errors=True)


def database_label() -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT sqlite_version()")
            return f"sqlite {cursor.fetchone()[0]} (file in a temporary directory, WAL)"
        cursor.execute("SHOW server_version")
        return f"postgresql {cursor.fetchone()[0]} ({connection.settings_dict['NAME']})"


def wipe() -> None:
    """Every item and recall entry gone (raw DELETEs: no signals, no change log); semantic off."""
    from django.db import connection, transaction

    from agent.models import Conversation, Message
    from memory.models import IndexState, Memory, RecallEntry
    from talorys.workspace.models import Note, Task

    with transaction.atomic(), connection.cursor() as cursor:
        for model in (RecallEntry, IndexState, Message, Conversation, Task, Note, Memory):
            cursor.execute(f"DELETE FROM {connection.ops.quote_name(model._meta.db_table)}")
    from talorys.owner.services.settings import owner_settings_update

    owner_settings_update(semantic_enabled=False)


def corpus(rs: RecallSet) -> list[str]:
    """The recall set's distinct turn texts: the sentences synthetic items are made of."""
    return sorted({turn.text for turn in rs.turns})


def seed(n: int, pool: list[str], rng: random.Random) -> None:
    """``n`` items: 70% conversation messages (200 a conversation), 10% each memories, tasks
    and notes, of recall-set sentences shuffled and combined. Messages are dated a month ago,
    as settled history is (the lazy pass re-reads the messages written in its last minutes)."""
    from agent.models import Conversation, Message
    from memory.models import Memory
    from talorys.workspace.models import Note, Task

    def sentences(k: int, sep: str = " ") -> str:
        return sep.join(rng.choice(pool) for _ in range(k))

    def words(k: int) -> str:
        return " ".join(rng.choice(pool).split()[:k]).rstrip(".,;:?!")

    n_messages = n * 7 // 10
    n_each = (n - n_messages) // 3
    conversations = Conversation.objects.bulk_create(
        Conversation(title=words(4))
        for _ in range(math.ceil(n_messages / MESSAGES_PER_CONVERSATION))
    )
    Message.objects.bulk_create(
        (
            Message(
                conversation=conversations[i // MESSAGES_PER_CONVERSATION],
                role="user" if i % 2 == 0 else "assistant",
                content=sentences(rng.randint(1, 3)),
            )
            for i in range(n_messages)
        ),
        batch_size=2000,
    )
    Message.objects.update(**_dated(dt.datetime.now(dt.UTC) - dt.timedelta(days=30)))
    Memory.objects.bulk_create((Memory(text=sentences(1)) for _ in range(n_each)), batch_size=2000)
    Task.objects.bulk_create(
        (
            Task(title=words(rng.randint(3, 7)), details=sentences(1) if rng.random() < 0.5 else "")
            for _ in range(n_each)
        ),
        batch_size=2000,
    )
    Note.objects.bulk_create(
        (
            Note(title=words(rng.randint(2, 5)), content=sentences(rng.randint(3, 8), "\n"))
            for _ in range(n - n_messages - 2 * n_each)
        ),
        batch_size=2000,
    )


def _dated(when: dt.datetime) -> dict[str, dt.datetime]:
    """A message's time columns (created_at, and updated_at where the model has it) at ``when``."""
    from agent.models import Message

    names = {field.name for field in Message._meta.get_fields()}
    return {name: when for name in ("created_at", "updated_at") if name in names}


def write_vectors(rng: np.random.Generator) -> np.ndarray:
    """A random unit float32 vector for every live entry, written straight into RecallEntry
    (vector, vector_model = FAKE_MODEL, vector_dim, vector_hash = content_hash): the state a
    reindex with that embedder leaves. Returns the N x 384 matrix."""
    from django.db import connection, transaction

    from memory.models import RecallEntry

    ids = list(RecallEntry.objects.filter(live=True).order_by("seq").values_list("id", flat=True))
    matrix = rng.standard_normal((len(ids), DIM), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    table = connection.ops.quote_name(RecallEntry._meta.db_table)
    sql = (
        f"UPDATE {table} SET vector = %s, vector_model = %s, vector_dim = %s,"
        " vector_hash = content_hash WHERE id = %s"
    )
    for start in range(0, len(ids), VECTOR_BATCH):
        rows = [
            (matrix[i].astype("<f4").tobytes(), FAKE_MODEL, DIM, ids[i])
            for i in range(start, min(start + VECTOR_BATCH, len(ids)))
        ]
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.executemany(sql, rows)
    return matrix


def unit_vector(text: str) -> np.ndarray:
    """A random unit vector fixed by ``text`` (so a query has the same one every time)."""
    digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
    vector = np.random.default_rng(int.from_bytes(digest, "little")).standard_normal(DIM)
    return (vector / np.linalg.norm(vector)).astype(np.float32)


class FakeEmbedder:
    """The Embedder protocol (memory/embeddings.py) at no cost: no model, no server."""

    name = FAKE_MODEL
    floor = 0.0
    sentences = False

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([unit_vector(text) for text in texts]) if texts else np.zeros((0, DIM))


_FAKE = FakeEmbedder()
_REAL: dict[str, Callable[..., Any]] = {}


def use_fake_embedder(on: bool) -> str:
    """Point memory.embeddings.local_embedder at FakeEmbedder, or back at the embedder process
    (one started here for the benchmark's run, on a socket of a temp dir, the first time).
    memory.embeddings' active_embedder is left as it is: it still reads the owner's settings on
    every recall."""
    from memory import embeddings

    if not _REAL:
        _REAL.update(local_embedder=embeddings.local_embedder)
    if on:
        embeddings.local_embedder = lambda: _FAKE  # type: ignore[assignment,return-value]
        return "memory.embeddings.local_embedder monkeypatched to " + FAKE_MODEL
    embeddings.local_embedder = _REAL["local_embedder"]  # type: ignore[assignment]
    _embedder_process()
    return "the embedder process"


def _embedder_process() -> None:
    """An embedder process for this benchmark's run (stopped when the run exits)."""
    import atexit
    import tempfile

    from django.conf import settings

    from benchmarks.embedder_process import start_embedder

    if _PROCESS:
        return
    folder = Path(tempfile.mkdtemp(prefix="tal-bench-"))
    process = start_embedder(folder, folder / "cache")
    atexit.register(process.terminate)
    _PROCESS.append(process)
    settings.TALORYS_EMBEDDER_URL = f"unix:{folder / 'embedder.sock'}"


_PROCESS: list[Any] = []


def load_recall_set(rs: RecallSet) -> dict[int, str]:
    """One Conversation per session, a Message per turn (dated on its day); message id -> turn
    id."""
    from agent.models import Conversation, Message

    sessions = sorted({turn.session for turn in rs.turns})
    conversation = {s: Conversation.objects.create(title=f"Session {s}") for s in sessions}
    messages = Message.objects.bulk_create(
        Message(conversation=conversation[t.session], role=t.role, content=t.text) for t in rs.turns
    )
    if any(m.pk is None for m in messages):  # a backend that returns no ids from bulk inserts
        messages = list(Message.objects.order_by("id"))
    days = {t.session: t.day for t in rs.turns}
    for s, day in days.items():
        when = dt.datetime.fromisoformat(day).replace(hour=12, tzinfo=dt.UTC)
        Message.objects.filter(conversation=conversation[s]).update(**_dated(when))
    return {m.pk: t.id for m, t in zip(messages, rs.turns, strict=True)}


def set_semantic(on: bool) -> None:
    """Semantic recall on or off, as the owner's setting."""

    from talorys.owner.services.settings import owner_settings_update

    owner_settings_update(semantic_enabled=on)
