"""Which libraries read the owner's files' text (files/extraction/), measured: pypdf against
pdfminer.six for PDF, python-docx against markitdown for Word, and Talorys's own extraction
(the child process, end to end) against its target.

    .venv/bin/python benchmarks/files_extraction.py [--pages 100] [--runs 3]

A library not installed in the running environment is reported as such: the project installs
pypdf and python-docx only, so to compare, run it from a scratch environment that has all four
(pdfminer.six and markitdown[docx] installed there, never in the project's)::

    .venv/bin/uv venv /tmp/fbv && .venv/bin/uv pip install --python /tmp/fbv/bin/python \\
        pypdf python-docx pdfminer.six "markitdown[docx]" && /tmp/fbv/bin/python benchmarks/files_extraction.py

1. PDF: a ``--pages``-page text PDF is written by hand (tests/files/makers.py: 40 lines of
   about 70 characters a page, each line numbered with its page). Each library reads every
   page's text, ``--runs`` times (median wall time); text quality is the share of the source's
   words found on the right page, and whether each page's text holds its own page's marker
   and no other page's.
2. Talorys end to end: the same PDF through ``python -m files.extraction.child`` (start, caps,
   read, passages, JSON): the time a 100-page text PDF takes to be ``ready`` but for the
   database writes. Target: 10 s on 2 cores.
3. Word: a document of 50 headings with 4 paragraphs each and a table, read by python-docx
   (as files/extraction/readers.py does) and by markitdown; median wall time, and whether
   every paragraph's words come out.
4. Installed size: each library with the distributions it pulls in (its required dependencies,
   transitively, as installed here: the files its RECORD lists), and how many there are.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata as metadata
import io
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._results import figure  # noqa: E402
from tests.files.makers import docx_file, text_pdf  # noqa: E402

WORDS = [
    "budget",
    "roof",
    "garden",
    "window",
    "invoice",
    "ferry",
    "paint",
    "contract",
    "meeting",
    "schedule",
    "kitchen",
    "delivery",
    "payment",
    "insurance",
    "heating",
    "station",
    "letter",
    "summary",
]
TARGET_SECONDS = 10.0


def source_pages(count: int) -> list[list[str]]:
    pages = []
    for page in range(1, count + 1):
        lines = [f"Page marker P{page:03d}X"]
        for line in range(39):
            words = [WORDS[(page * 7 + line * 3 + n) % len(WORDS)] for n in range(9)]
            lines.append(f"{line + 1}. " + " ".join(words) + f" {page * 100 + line}.")
        pages.append(lines)
    return pages


def timed(work: Callable[[], Any], runs: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def available(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def pypdf_pages(data: bytes) -> list[str]:
    from pypdf import PdfReader

    return [page.extract_text() or "" for page in PdfReader(io.BytesIO(data)).pages]


def pdfminer_pages(data: bytes) -> list[str]:
    high_level = importlib.import_module("pdfminer.high_level")
    layout = importlib.import_module("pdfminer.layout")
    return [
        "".join(
            element.get_text() for element in page if isinstance(element, layout.LTTextContainer)
        )
        for page in high_level.extract_pages(io.BytesIO(data))
    ]


def quality(pages: list[str], source: list[list[str]]) -> tuple[float, float]:
    """(share of source words found on their page, share of pages holding only their marker)."""
    found = total = right = 0
    for number, (text, lines) in enumerate(zip(pages, source, strict=False), 1):
        words = set(re.findall(r"\w+", text))
        wanted = [w for line in lines for w in re.findall(r"\w+", line)]
        found += sum(1 for w in wanted if w in words)
        total += len(wanted)
        markers = set(re.findall(r"P(\d{3})X", text))
        right += markers == {f"{number:03d}"}
    return found / max(total, 1), right / max(len(source), 1)


def child_read(data: bytes) -> dict[str, Any]:
    import json

    done = subprocess.run(
        [sys.executable, "-m", "files.extraction.child", "application/pdf", str(1024**3)],
        input=data,
        capture_output=True,
        cwd=ROOT,
        check=True,
    )
    return dict(json.loads(done.stdout))


def docx_source() -> tuple[bytes, list[str]]:
    sections, paragraphs = [], []
    for n in range(50):
        body = [
            f"Paragraph {n}-{k}: " + " ".join(WORDS[(n + k + i) % len(WORDS)] for i in range(20))
            for k in range(4)
        ]
        sections.append((f"Section {n}", body))
        paragraphs += body
    return docx_file(sections, table=[["Item", "Price"], ["Paint", "120"]]), paragraphs


def python_docx_text(data: bytes) -> str:
    from files.extraction.readers import read_docx

    sections, _ = read_docx(data)
    return "\n".join(section.text for section in sections)


def markitdown_text(data: bytes) -> str:
    module = importlib.import_module("markitdown")
    converted = module.MarkItDown().convert_stream(io.BytesIO(data), file_extension=".docx")
    return str(converted.text_content)


def installed(distribution: str) -> tuple[int, int] | None:
    """(bytes on disk of it and its required dependencies, how many distributions)."""
    seen: set[str] = set()
    size = 0
    todo = [distribution]
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            if name == distribution:
                return None
            continue
        seen.add(key)
        for file in dist.files or []:
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                size += path.stat().st_size
        for requirement in dist.requires or []:
            if "extra ==" in requirement and not (
                distribution == "markitdown" and "'docx'" in requirement
            ):
                continue
            if "python_version" in requirement and "< '3.11'" in requirement.replace('"', "'"):
                continue
            todo.append(re.split(r"[\s;<>=!~\[(]", requirement, maxsplit=1)[0])
    return size, len(seen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    source = source_pages(options.pages)
    pdf = text_pdf(source)
    print(f"PDF: {options.pages} pages, {len(pdf) / 1024:.0f} KiB; median of {options.runs} runs")
    for name, module, read in (
        ("pypdf", "pypdf", pypdf_pages),
        ("pdfminer.six", "pdfminer", pdfminer_pages),
    ):
        if not available(module):
            print(f"  {name:13} not installed here")
            continue
        seconds, pages = timed(lambda read=read: read(pdf), options.runs)
        words, right = quality(pages, source)
        print(
            f"  {name:13} {seconds:6.2f} s  words on their page {words:6.1%}  "
            f"pages with their own marker only {right:6.1%}  ({len(pages)} pages)"
        )
    seconds, answer = timed(lambda: child_read(pdf), options.runs)
    verdict = "met" if seconds <= TARGET_SECONDS else "MISSED"
    figure(
        "files_extraction",
        f"{options.pages}-page text PDF read, s",
        seconds,
        "s",
        target=TARGET_SECONDS,
        note="the extraction child end to end (files/extraction/)",
    )
    print(
        f"  Talorys child {seconds:6.2f} s  end to end, {len(answer['passages'])} passages "
        f"(target {TARGET_SECONDS:g} s: {verdict})"
    )
    docx, paragraphs = docx_source()
    print(f"Word: {len(paragraphs)} paragraphs under 50 headings, {len(docx) / 1024:.0f} KiB")
    for name, module, read in (
        ("python-docx", "docx", python_docx_text),
        ("markitdown", "markitdown", markitdown_text),
    ):
        if not available(module):
            print(f"  {name:13} not installed here")
            continue
        try:
            seconds, text = timed(lambda read=read: read(docx), options.runs)
        except Exception as error:  # a library that cannot read the document: say so
            print(f"  {name:13} failed: {type(error).__name__}: {str(error).strip()[:160]}")
            continue
        flat = " ".join(text.split())
        whole = sum(1 for p in paragraphs if p in flat) / len(paragraphs)
        print(f"  {name:13} {seconds:6.3f} s  paragraphs whole {whole:6.1%}")
    print("Installed size, with required dependencies (as installed here):")
    for distribution in ("pypdf", "pdfminer.six", "python-docx", "markitdown"):
        found = installed(distribution)
        if found is None:
            print(f"  {distribution:13} not installed here")
        else:
            print(f"  {distribution:13} {found[0] / 1024**2:7.1f} MiB in {found[1]} distributions")


if __name__ == "__main__":
    main()
