"""Embedding under concurrency: one lazy pass of a process embeds at a time."""

from __future__ import annotations

import pytest

from memory import selectors
from memory import services as memory_services
from memory.recall import writer


@pytest.mark.django_db
def test_a_lazy_pass_leaves_the_vectors_to_the_one_already_embedding(local_embeddings):
    memory_services.reindex_recent()  # the first pass of an install (a full one) is done
    memory_services.memory_create_unchecked(text="My daughter started the cello")

    with writer._LAZY_EMBEDDING:  # another thread's lazy pass is embedding
        skipped = memory_services.reindex_recent()
    # A ranking brings this process's copy up to date (as a turn's does before its reply's
    # pass), and the next lazy pass makes the vector.
    selectors.recall_items(query="cello", catch_up=False)
    made = memory_services.reindex_recent()

    assert skipped.embedded == 0
    assert made.embedded == 1
