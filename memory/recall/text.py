"""Text into terms for BM25: Unicode folded, stop words out, English words stemmed.

"São Paulo's" and "sao paulo" meet at ``sao paulo``; "moving", "moved" and "moves" at ``move``.
Tokens with a digit (phone numbers, codes, years) are kept whole and never stemmed, so an exact
number or code is matched exactly.
"""

from __future__ import annotations

import hashlib
import re
import threading
import unicodedata
from collections import Counter
from functools import lru_cache

import snowballstemmer  # type: ignore[import-untyped]  # ships no types

_TOKEN = re.compile(r"[^\W_]+")
# A snowball stemmer keeps its word in its own fields while it works: one shared by two threads
# (a turn reads memories and related items at once, agent/runner/db.py `together`) corrupts
# both words, or fails an assertion inside it. One per thread.
_stemmers = threading.local()

# The Snowball project's English stop list (snowballstem.org/algorithms/english/stop.txt), less
# the few words that carry meaning in an owner's question ("no", "not", "off", "again").
_STOP_LIST = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom
    this that these those am is are was were be been being have has had having do does did doing
    would should could ought i'm you're he's she's it's we're they're i've you've we've they've
    i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll they'll isn't aren't wasn't
    weren't hasn't haven't hadn't doesn't don't didn't won't wouldn't shan't shouldn't can't
    cannot couldn't mustn't let's that's who's what's here's there's when's where's why's how's
    a an the and but if or because as until while of at by for with about against between into
    through during before after above below to from up down in out on over under further then
    once here there when where why how all any both each few more most other some such nor only
    own same so than too very s t can will just don should now d ll m o re ve y
"""
STOP_WORDS = frozenset(_STOP_LIST.split())


def fold(text: str) -> str:
    """Lower case without accents: compatibility-decomposed, combining marks dropped."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    if any(ch.isdigit() for ch in word):
        return word
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        stemmer = _stemmers.english = snowballstemmer.stemmer("english")
    return str(stemmer.stemWord(word))


def terms(text: str) -> list[str]:
    """The BM25 terms of ``text``, in order (repeats kept: they are the term frequencies)."""
    return [
        _stem(word)
        for word in _TOKEN.findall(fold(text))
        if word not in STOP_WORDS and (len(word) > 1 or word.isdigit())
    ]


def term_counts(text: str) -> Counter[str]:
    return Counter(terms(text))


def content_hash(*parts: str) -> str:
    """What an entry was made from: its vector and its keyword entry are stale when it differs."""
    digest = hashlib.blake2b(digest_size=16)
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\x1f")
    return digest.hexdigest()
