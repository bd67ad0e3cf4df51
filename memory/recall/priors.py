"""What ranking knows besides an item's own text: the conversation around it and its time.

Both act on the scores of any mode (keyword, vector, hybrid), after them and before the best are
taken, as numpy over every slot (about a millisecond at 100k items).

**The conversation.** A reply carries its meaning in the turn it answers: "Yes, last Tuesday,
with my sister" is about whatever was asked just before. So a message's score rises toward its
previous turn's when that turn matches the query better: ``own + CONTEXT_SHARE x (previous -
own)`` if the previous is higher, else its own. It never falls (a message that says it all
itself keeps its score, and only messages have a previous turn, so other kinds are not
outranked by a mere neighbour), and it stays below the turn it leans on (the question it answers
still ranks above it when the question matches better). ``CONTEXT_SHARE`` is one half: an
exchange is a question and its answer, and the reply is ranked as the midpoint of what it says
and what it answers; more would rank the acknowledgement after every fact ("Noted!") nearly as
high as the fact.

**Time.** Of two statements about a thing that changed ("I drive a Mazda", later "traded it in
for a Volvo") the later one is the answer. A recency prior in the manner of Li & Croft (2003,
"Time-based language models"): an exponential decay with age, the age measured from the newest
item the index holds (the collection's "now", not the wall clock, so a pause in use or an
imported history ages nothing), mixed with a uniform prior so age alone never buries an old
match: a score is multiplied by ``1 + RECENCY_BOOST x 2 ** (-age / RECENCY_HALF_LIFE)``. The
newest item gains at most ``RECENCY_BOOST`` (a fifth) over one of any age: it reorders matches
whose scores are within a fifth of each other, the spread of a sentence embedding's cosine
between two phrasings of the same thing, and never a clearly better one. The half-life is a
quarter of a year: the facts of a life (a home, a job, a dose, a manager) change over months, so
a statement a season old has lost half its advantage. An item with no known time has none.
Scores at or below zero are left alone (a negative cosine is no match to favour).

**The period the question names.** "What did Maria donate in December 2023?" asks about what was
said then, and the item rarely says "December 2023" itself. An item stated within a period the
question names (periods.py), or within ``PERIOD_GRACE`` after it (an event is often told in the
days after it happened: "last weekend I..."), scores ``1 + PERIOD_BOOST`` times as much. It
reorders items that match the rest of the question alike (a boost of 0.6 outweighs the recency
prior and a cosine's spread between phrasings) but does not lift an item that matches nothing
else: a score of zero stays zero. On LoCoMo's development conversations (benchmarks/
recall_longchat.py) it is worth +0.02 R@10 overall; boosts from 0.3 to 1.0 measured within 0.005
of each other, so the value is not fitted.
"""

from __future__ import annotations

import numpy as np

CONTEXT_SHARE = 0.5
RECENCY_BOOST = 0.2
RECENCY_HALF_LIFE = 91 * 86_400.0  # seconds: a quarter of a year
PERIOD_BOOST = 0.6
PERIOD_GRACE = 7 * 86_400.0  # seconds after a named period that still count as within it


def in_conversation(scores: np.ndarray, previous: np.ndarray) -> np.ndarray:
    """Each slot's score lifted toward its previous turn's (``previous``: a slot per slot, -1
    for none). ``scores`` must be finite."""
    has = np.flatnonzero(previous >= 0)
    if not len(has):
        return scores
    own = scores[has]
    lift = np.maximum(scores[previous[has]] - own, 0.0)
    out = scores.copy()
    out[has] = own + CONTEXT_SHARE * lift
    return out


def recency_factor(times: np.ndarray, newest: float) -> np.ndarray | None:
    """Each slot's recency weight (``times``: POSIX seconds per slot, NaN where unknown;
    ``newest``: the latest of them), or None when no time is known. It changes only with the
    index, so the index keeps it between queries (RecallIndex.recency_factor)."""
    if np.isnan(newest):
        return None
    weight = np.exp2(-(newest - times) / RECENCY_HALF_LIFE)
    return (1.0 + RECENCY_BOOST * np.nan_to_num(weight, nan=0.0)).astype(np.float32)


def recency(scores: np.ndarray, factor: np.ndarray | None) -> np.ndarray:
    """``scores`` weighted by the recency prior (``recency_factor``'s)."""
    if factor is None:
        return scores
    return np.where(scores > 0.0, scores * factor, scores).astype(scores.dtype, copy=False)


def in_period(
    scores: np.ndarray, times: np.ndarray, periods: list[tuple[float, float]]
) -> np.ndarray:
    """``scores`` with the items stated within one of ``periods`` (POSIX seconds, [start, end),
    each widened by PERIOD_GRACE after it) weighed ``1 + PERIOD_BOOST``; an unknown time (NaN)
    is within none."""
    if not periods:
        return scores
    within = np.zeros(len(scores), dtype=bool)
    with np.errstate(invalid="ignore"):
        for start, end in periods:
            within |= (times >= start) & (times < end + PERIOD_GRACE)
    return np.where(within & (scores > 0.0), scores * (1.0 + PERIOD_BOOST), scores).astype(
        scores.dtype, copy=False
    )
