"""BERT's WordPiece tokenizer in plain Python, for the local embedder (minilm.py).

It reads the model's own ``tokenizer.json`` (the vocabulary) and does what the Hugging Face
``tokenizers`` library does with that file's BertNormalizer, BertPreTokenizer and WordPiece
model: clean the text (control characters dropped, every white space a space), put spaces
around CJK ideographs, strip accents (NFD, combining marks dropped), lowercase; split on white
space and on every punctuation character; then cut each word into the longest pieces the
vocabulary has, continuations prefixed with ``##`` (a word that cannot be cut, or of more than
100 characters, is ``[UNK]``). tests/memory/test_local_embedder.py checks it against
``tokenizers`` token for token.

Why not ``tokenizers`` itself: it brings huggingface-hub (a client for downloading models) and
its dependencies into the default install for what is a hundred lines here, and a query of a
dozen words is cut in tens of microseconds either way.
"""

from __future__ import annotations

import json
import unicodedata
from functools import lru_cache
from pathlib import Path

MAX_WORD_CHARS = 100
# The CJK Unified Ideographs blocks, as BERT's tokenizer lists them.
_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


def _is_cjk(code: int) -> bool:
    return any(low <= code <= high for low, high in _CJK)


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_whitespace(char: str) -> bool:
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def _is_control(char: str) -> bool:
    return char not in "\t\n\r" and unicodedata.category(char).startswith("C")


class WordPiece:
    def __init__(self, path: Path) -> None:
        spec = json.loads(path.read_text(encoding="utf-8"))
        model = spec["model"]
        if model.get("type") != "WordPiece":
            raise RuntimeError(f"{path} is not a WordPiece tokenizer.")
        self.vocab: dict[str, int] = model["vocab"]
        self.prefix: str = model.get("continuing_subword_prefix", "##")
        self.unk = self.vocab[model.get("unk_token", "[UNK]")]
        self.cls = self.vocab["[CLS]"]
        self.sep = self.vocab["[SEP]"]
        # Words repeat (a vocabulary of everyday words): each is cut once per process.
        self.word_ids = lru_cache(maxsize=50_000)(self._word_ids)

    def encode(self, text: str, *, max_tokens: int) -> list[int]:
        """``[CLS] pieces [SEP]``, at most ``max_tokens`` ids in all (the rest is cut off)."""
        ids = [self.cls]
        room = max_tokens - 1
        for word in self.words(text):
            ids.extend(self.word_ids(word))
            if len(ids) >= room:
                del ids[room:]
                break
        ids.append(self.sep)
        return ids

    @staticmethod
    def normalize(text: str) -> str:
        out = []
        for char in text:
            code = ord(char)
            if code == 0 or code == 0xFFFD or _is_control(char):
                continue
            if _is_whitespace(char):
                out.append(" ")
            elif _is_cjk(code):
                out.append(f" {char} ")
            else:
                out.append(char)
        decomposed = unicodedata.normalize("NFD", "".join(out))
        return "".join(c for c in decomposed if unicodedata.category(c) != "Mn").lower()

    def words(self, text: str) -> list[str]:
        words: list[str] = []
        for chunk in self.normalize(text).split():
            start = 0
            for i, char in enumerate(chunk):
                if _is_punctuation(char):
                    if i > start:
                        words.append(chunk[start:i])
                    words.append(char)
                    start = i + 1
            if start < len(chunk):
                words.append(chunk[start:])
        return words

    def _word_ids(self, word: str) -> tuple[int, ...]:
        if len(word) > MAX_WORD_CHARS:
            return (self.unk,)
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else self.prefix + word[start:end]
                found = self.vocab.get(piece)
                if found is not None:
                    pieces.append(found)
                    break
                end -= 1
            else:
                return (self.unk,)
            start = end
        return tuple(pieces)
