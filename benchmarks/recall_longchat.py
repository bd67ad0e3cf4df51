"""Recall on long real chat histories: LoCoMo's conversations as an owner's history.

    .venv/bin/python benchmarks/recall_longchat.py [--data PATH] [--modes keyword,default]
        [--database-url postgres://postgres@127.0.0.1:5432/NAME]

The data: LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM
Agents", ACL 2024; github.com/snap-research/LoCoMo, ``data/locomo10.json``), licensed CC BY-NC
4.0: it is read from outside the repository (``--data``, else ``TALORYS_LOCOMO``, else
``../shared/eval/locomo-dev.json`` beside the clone) and never copied into it. Without the file
the benchmark says why and exits 0 (``make bench`` goes on).

How each conversation is loaded and scored (the same way the held-out conversations are scored
from outside): the database is wiped; each session becomes one Conversation, each turn one
complete Message (``speaker_a`` as the owner, the other as the assistant), its content
``"{speaker}: {text}"`` plus ``" [image: {blip_caption}]"`` when it has one, its time the
session's date. ``memory.services.reindex()`` indexes them (and embeds them with the default
install's embedder). Each question of categories 1-4 (5 is adversarial: no answer) asks
``memory.selectors.recall_items(query=question, kinds=["message"], limit=25)``; a hit counts
when its message is one of the question's evidence turns. Per category and overall: evidence
recall R@5, R@10, R@25 (the share of a question's evidence turns in the top k, averaged over
questions) and MRR (1 / rank of the first evidence hit, 0 past 25). Modes: ``keyword``
(semantic recall off) and ``default`` (the default install: semantic recall on, hybrid).

``--fusion`` adds a row per fusion candidate (benchmarks/_fusion.py: the same two score
arrays fused another way) and one for the default engine with each message read whole (one
vector of its text, not the mean of its sentences').

Categories (LoCoMo's): 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import _fusion  # noqa: E402
from benchmarks import recall_build as rb  # noqa: E402
from benchmarks._results import figure  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "eval" / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
LIMIT = 25
TARGETS = {("default", "R@10"): 0.75, ("default", "MRR"): 0.55}


@dataclass(frozen=True)
class Turn:
    id: str
    session: int
    owner: bool
    text: str
    when: dt.datetime


@dataclass(frozen=True)
class Question:
    text: str
    evidence: frozenset[str]
    category: int


def data_path(given: str | None) -> Path:
    return Path(given or os.environ.get("TALORYS_LOCOMO") or DEFAULT_DATA)


def read_samples(path: Path) -> list[tuple[str, list[Turn], list[Question]]]:
    """Each sample: its id, its turns in order and its answerable questions."""
    samples = []
    for sample in json.loads(path.read_text()):
        chat = sample["conversation"]
        turns: list[Turn] = []
        session = 1
        while f"session_{session}" in chat:
            when = dt.datetime.strptime(
                chat[f"session_{session}_date_time"].strip(), "%I:%M %p on %d %B, %Y"
            ).replace(tzinfo=dt.UTC)
            for turn in chat[f"session_{session}"]:
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [image: {turn['blip_caption']}]"
                owner = turn["speaker"] == chat["speaker_a"]
                turns.append(Turn(turn["dia_id"], session, owner, text, when))
            session += 1
        known = {turn.id for turn in turns}
        questions = [
            Question(
                text=qa["question"],
                # A few evidence fields hold two ids in one string ("D8:6; D9:17").
                evidence=frozenset(
                    part.strip()
                    for field in qa["evidence"]
                    for part in re.split(r"[;,]", field)
                    if part.strip() in known
                ),
                category=qa["category"],
            )
            for qa in sample["qa"]
            if qa["category"] in CATEGORIES
        ]
        samples.append((sample.get("sample_id", "?"), turns, [q for q in questions if q.evidence]))
    return samples


def load_history(turns: list[Turn]) -> dict[int, str]:
    """The turns as the owner's conversations (one per session); message id -> turn id."""
    from agent.models import Conversation, Message

    sessions = sorted({turn.session for turn in turns})
    conversation = {s: Conversation.objects.create(title=f"Session {s}") for s in sessions}
    messages = Message.objects.bulk_create(
        Message(
            conversation=conversation[t.session],
            role="user" if t.owner else "assistant",
            content=t.text,
        )
        for t in turns
    )
    if any(m.pk is None for m in messages):  # a backend that returns no ids from bulk inserts
        messages = list(Message.objects.order_by("id"))
    for t in {t.session: t for t in turns}.values():
        Message.objects.filter(conversation=conversation[t.session]).update(**rb._dated(t.when))
    return {m.pk: t.id for m, t in zip(messages, turns, strict=True)}


def score(ranked: list[str], evidence: frozenset[str]) -> tuple[float, ...]:
    first = next((1 / rank for rank, t in enumerate(ranked, start=1) if t in evidence), 0.0)
    found = [len(evidence & set(ranked[:k])) / len(evidence) for k in (5, 10, 25)]
    return (*found, first)


def measure(
    samples: list[Any], modes: list[str], *, fusion: bool = False
) -> dict[str, dict[str, list[tuple[float, ...]]]]:
    """Each mode's (and with ``fusion`` each candidate's) scores per category ("all" too)."""
    from memory import services

    scores: dict[str, dict[str, list[tuple[float, ...]]]] = {}
    for name, turns, questions in samples:
        rb.wipe()
        turn_of = load_history(turns)
        for mode in modes:
            rb.set_semantic(mode != "keyword")
            began = time.perf_counter()
            report = services.reindex()
            took = time.perf_counter() - began
            _score_rows(scores.setdefault(mode, {}), questions, turn_of, _engine)
            print(
                f"{name}: {len(turns)} turns, {len(questions)} questions, {mode}: "
                f"reindex {took:.1f} s, {report.embedded} embedded",
                flush=True,
            )
        if fusion:
            _measure_fusion(scores, questions, turn_of)
    return scores


def _engine(question: str) -> list[int]:
    from memory.selectors import recall_items

    return [hit.id for hit in recall_items(query=question, kinds=["message"], limit=LIMIT)]


def _measure_fusion(scores: dict[str, Any], questions: list[Question], turn_of: dict) -> None:
    from memory import embeddings

    rb.set_semantic(True)
    embedder = embeddings.active_embedder()
    for name in _fusion.CANDIDATES:

        def by_candidate(question: str, name: str = name) -> list[int]:
            return _fusion.ranked(name, question, embedder, kinds=["message"], top=LIMIT)

        _score_rows(scores.setdefault(name, {}), questions, turn_of, by_candidate)
    whole = _fusion.WholeText(embedder)
    _fusion.embed_all(whole)
    label = "standardised, messages read whole"
    _score_rows(
        scores.setdefault(label, {}),
        questions,
        turn_of,
        lambda q: _fusion.ranked(
            "standardised (the engine's)", q, whole, kinds=["message"], top=LIMIT
        ),
    )


def _score_rows(
    into: dict[str, list[tuple[float, ...]]],
    questions: list[Question],
    turn_of: dict[int, str],
    rank: Any,
) -> None:
    for q in questions:
        row = score([turn_of.get(i, "") for i in rank(q.text)], q.evidence)
        for key in ("all", CATEGORIES[q.category]):
            into.setdefault(key, []).append(row)


def table(scores: dict[str, dict[str, list[tuple[float, ...]]]]) -> str:
    head = "| mode | category | questions | R@5 | R@10 | R@25 | MRR |"
    lines = [head, "|---|---|---:|---:|---:|---:|---:|"]
    for mode, by_category in scores.items():
        for category in ("all", *CATEGORIES.values()):
            rows = by_category.get(category, [])
            if not rows:
                continue
            means = [statistics.fmean(r[i] for r in rows) for i in range(4)]
            cells = [mode, category, str(len(rows)), *(f"{m:.3f}" for m in means)]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def publish(scores: dict[str, dict[str, list[tuple[float, ...]]]]) -> None:
    for mode in ("keyword", "default"):
        by_category = scores.get(mode)
        if by_category is None:
            continue
        rows = by_category["all"]
        for metric, index in (("R@5", 0), ("R@10", 1), ("R@25", 2), ("MRR", 3)):
            figure(
                "recall_longchat",
                f"LoCoMo dev, {mode}: {metric}",
                statistics.fmean(r[index] for r in rows),
                "",
                target=TARGETS.get((mode, metric)),
                better="higher",
                note="5 conversations, categories 1-4, recall_items(kinds=messages, limit=25)",
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="LoCoMo's JSON (default: TALORYS_LOCOMO or ../shared)")
    parser.add_argument("--modes", default="keyword,default")
    parser.add_argument("--database-url")
    parser.add_argument("--fusion", action="store_true", help="add the fusion candidates' rows")
    args = parser.parse_args()
    path = data_path(args.data)
    if not path.is_file():
        print(f"Skipped: no LoCoMo file at {path} (set --data or TALORYS_LOCOMO).")
        return 0
    samples = read_samples(path)
    scratch = rb.boot(args.database_url)
    try:
        print(f"database: {rb.database_label()}; data: {path}", flush=True)
        scores = measure(samples, args.modes.split(","), fusion=args.fusion)
    finally:
        rb.close(scratch)
    print(table(scores))
    publish(scores)
    return 0


if __name__ == "__main__":
    sys.exit(main())
