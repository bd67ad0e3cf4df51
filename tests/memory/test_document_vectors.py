"""A document's vector for a sentence-reading embedder (the local model) is the mean of its
sentences' vectors, each sentence carrying the item's title or its text's opening label."""

from __future__ import annotations

import numpy as np
import pytest

from agent.models import Conversation, Message
from memory import embeddings, services
from memory.embeddings import MAX_SENTENCES, document_pieces
from memory.models import RecallEntry


@pytest.mark.parametrize(
    ("title", "body", "pieces"),
    [
        ("", "I moved to Lisbon.", ["I moved to Lisbon."]),
        (
            "",
            "Caroline: Hey Mel! I went to a support group yesterday.",
            ["Caroline: Hey Mel!", "Caroline: I went to a support group yesterday."],
        ),
        (
            "Groceries",
            "Buy milk.\n\nBuy eggs. Then call mum?",
            ["Groceries: Buy milk.", "Groceries: Buy eggs.", "Groceries: Then call mum?"],
        ),
        ("Trip", "Pack the tent", ["Trip\nPack the tent"]),  # one sentence: the whole text
        # No context to carry: the whole text (a colon that is not a label's makes none up).
        ("", "I moved to Lisbon. The flat is small.", ["I moved to Lisbon. The flat is small."]),
        (
            "",
            "See https://example.org: it opens at 9. Bring cash.",
            ["See https://example.org: it opens at 9. Bring cash."],
        ),
    ],
)
def test_a_document_is_read_as_its_sentences_with_their_context(title, body, pieces):
    assert document_pieces(title, body) == pieces


def test_a_long_document_gives_at_most_max_sentences():
    body = " ".join(f"Sentence {n} is here." for n in range(40))
    assert len(document_pieces("Notes", body)) == MAX_SENTENCES


@pytest.mark.django_db
def test_the_stored_vector_is_the_mean_of_the_sentences(local_embeddings):
    text = "Melanie: We went camping at the lake. The kids loved the canoe!"
    message = Message.objects.create(
        conversation=Conversation.objects.create(), role="user", content=text
    )
    services.reindex()

    embedder = embeddings.active_embedder()
    assert embedder is not None and embedder.sentences
    stored = RecallEntry.objects.get(kind="message", object_id=message.pk)
    vector = np.frombuffer(stored.vector, dtype="<f4")
    parts = embedder.embed(document_pieces("", text))
    mean = parts.sum(axis=0) / np.linalg.norm(parts.sum(axis=0))
    whole = embedder.embed([text])[0]
    assert float(vector @ mean) > 0.9999
    assert float(vector @ whole) < 0.99  # not the whole text's vector
