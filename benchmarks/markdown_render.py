"""What one Markdown render costs (talorys/lib/markdown.py), on the inputs that make markdown-it-py
slow, at the largest size it is asked to render (``MAX_CHARS``) and smaller.

    .venv/bin/python benchmarks/markdown_render.py [--sizes 2000,8000,32000,200000] [--repeat 3]

For each input and size: the median wall time and thread CPU time of a render with the cache
cleared, and whether it came out as Markdown or as plain text (over the budget). No database.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _repeat(unit: str) -> Callable[[int], str]:
    return lambda size: (unit * (size // len(unit) + 1))[:size]


def _nested_list(size: int) -> str:
    lines, total, depth = [], 0, 0
    while total < size:
        line = "  " * depth + "- a\n"
        lines.append(line)
        total += len(line)
        depth += 1
    return "".join(lines)[:size]


PARAGRAPH = (
    "## Section\n\nA paragraph with **bold**, *emphasis*, `code` and a [link](https://example.org)"
    ", as a reply usually reads.\n\n- an item\n- another with `code`\n  - nested\n\n"
    "```python\ndef f(x):\n    return x * 2  # a comment\n```\n\n| a | b |\n| --- | --- |\n"
    "| 1 | 2 |\n\n> a quote\n\n"
)

# Inputs found slow (20-30 µs a character, or worse than linear), and an ordinary reply.
PATHOLOGICAL: dict[str, Callable[[int], str]] = {
    "![": _repeat("!["),
    "[": _repeat("["),
    "![a](": _repeat("![a]("),
    "[a](": _repeat("[a]("),
    "*a": _repeat("*a"),
    "_a": _repeat("_a"),
    "*a* ": _repeat("*a* "),
    "~~a": _repeat("~~a"),
    "<": _repeat("<"),
    "`a": _repeat("`a"),
    "&#": _repeat("&#"),
    "a\\n\\n": _repeat("a\n\n"),
    "x\\n": _repeat("x\n"),
    ">": _repeat(">"),
    "> \\n": _repeat("> \n"),
    "nested list": _nested_list,
    "[x]: refs": _repeat("[x]: /u\n"),
}
ORDINARY: dict[str, Callable[[int], str]] = {"ordinary reply": _repeat(PARAGRAPH)}


def measure(text: str, repeat: int) -> tuple[float, float, bool]:
    """Median wall and CPU seconds of an uncached render, and whether it was plain text."""
    from talorys.lib.markdown import _CACHE, plain_html, render_markdown

    walls, cpus, html = [], [], ""
    for _ in range(repeat):
        _CACHE.clear()
        wall, cpu = time.perf_counter(), time.thread_time()
        html = render_markdown(text)
        cpus.append(time.thread_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return statistics.median(walls), statistics.median(cpus), html == plain_html(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,8000,32000,200000")
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    sizes = [int(size) for size in options.sizes.split(",")]
    print(f"{'input':16} " + " ".join(f"{size:>22}" for size in sizes))
    for name, make in (PATHOLOGICAL | ORDINARY).items():
        cells = []
        for size in sizes:
            wall, cpu, plain = measure(make(size), options.repeat)
            cells.append(f"{wall * 1000:7.1f} ms {cpu * 1000:6.1f} cpu {'P' if plain else 'M'}")
        print(f"{name:16} " + " ".join(f"{cell:>22}" for cell in cells), flush=True)
    print("wall ms, thread CPU ms (medians); M: rendered as Markdown, P: plain text (budget)")


if __name__ == "__main__":
    main()
