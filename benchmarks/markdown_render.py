"""What one Markdown render costs, on the inputs that make markdown-it-py slow and on an ordinary
reply and note, at the largest size Talorys renders (``MAX_CHARS``): Talorys's renderer
(talorys/lib/markdown.py: markdown-it-py within its CPU budget, then nh3), the same parser
without the budget, and cmark-gfm through ``cmarkgfm`` when it is installed (it is not a
dependency: ``uv pip install cmarkgfm`` to compare), each followed by nh3.

    .venv/bin/python benchmarks/markdown_render.py [--sizes 100000] [--repeat 3] [--leak 100]
        [--renderers talorys,markdown-it,cmarkgfm] [--give-up 5]

For each input, size and renderer: the median and the worst thread CPU time of ``--repeat``
renders with the cache cleared (one only, marked +, when it took over ``--give-up`` seconds:
nh3 on cmark-gfm's HTML for a long run of ">" takes about a minute); P when Talorys showed the
text plain (over its budget). Then
the memory each parser keeps: the growth of the process's resident set over ``--leak`` renders
of a 50,000-character reply. No database.
"""

from __future__ import annotations

import argparse
import importlib
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
NOTE = (
    "# Saturday\n\nShopping, and what is left of the week:\n\n- [ ] cheese, *aged*\n- [x] milk\n"
    "  - [ ] oat, not cow\n- [ ] call the plumber about the ~~kitchen~~ bathroom tap\n\n"
    "> 1. [X] bread\n\nSee [the recipe](https://example.org/soup) and `make soup`.\n\n"
)

# Inputs found slow (20-30 µs a character, or worse than linear), and an ordinary reply and note.
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
    "| table": _repeat("| a | b |\n| - | - |\n" + "| 1 | 2 |\n" * 50),
}
ORDINARY: dict[str, Callable[[int], str]] = {
    "ordinary reply": _repeat(PARAGRAPH),
    "ordinary note": _repeat(NOTE),
}


def renderers() -> dict[str, Callable[[str], str]]:
    """Each renderer by name, text to sanitised HTML; cmarkgfm only when it is installed."""
    import nh3

    from talorys.lib.markdown import _CACHE, _CLEAN, _MD, render_markdown

    def talorys(text: str) -> str:
        _CACHE.clear()
        return render_markdown(text)

    found = {
        "talorys": talorys,
        # The same parser, tasks and highlighting: the budget's rules never stop it here.
        "markdown-it": lambda text: nh3.clean(_MD.render(text), **_CLEAN),
    }
    try:
        cmark = importlib.import_module("cmarkgfm")
    except ImportError:
        return found
    found["cmarkgfm"] = lambda text: nh3.clean(
        cmark.github_flavored_markdown_to_html(text), **_CLEAN
    )
    return found


def measure(
    render: Callable[[str], str], text: str, repeat: int, give_up: float
) -> tuple[list[float], str]:
    """Thread CPU seconds of ``repeat`` renders (fewer past ``give_up``), and the last HTML."""
    cpus: list[float] = []
    html = ""
    while len(cpus) < repeat and not (cpus and cpus[-1] > give_up):
        started = time.thread_time()
        html = render(text)
        cpus.append(time.thread_time() - started)
    return cpus, html


def resident_mb() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096 / 2**20


def main() -> None:
    from talorys.lib.markdown import plain_html

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--leak", type=int, default=100)
    parser.add_argument("--renderers", default="talorys,markdown-it,cmarkgfm")
    parser.add_argument("--give-up", type=float, default=5.0)
    options = parser.parse_args()
    wanted = options.renderers.split(",")
    found = {name: render for name, render in renderers().items() if name in wanted}
    print(f"{'input':16} {'size':>7} " + " ".join(f"{name:>22}" for name in found))
    for name, make in (PATHOLOGICAL | ORDINARY).items():
        for size in [int(size) for size in options.sizes.split(",")]:
            text, cells = make(size), []
            for renderer, render in found.items():
                cpus, html = measure(render, text, options.repeat, options.give_up)
                median, worst = statistics.median(cpus) * 1000, max(cpus) * 1000
                plain = "P" if renderer == "talorys" and html == plain_html(text) else " "
                more = "+" if len(cpus) < options.repeat else " "
                cells.append(f"{median:8.1f} {worst:8.1f} ms {plain}{more}")
            print(f"{name:16} {size:7} " + " ".join(f"{cell:>22}" for cell in cells), flush=True)
    print("thread CPU ms: median and worst; P: shown as plain text (over the budget); +: one run")
    reply = ORDINARY["ordinary reply"](50_000)
    for renderer, render in found.items():
        if options.leak and renderer != "talorys":
            render(reply)  # warm: lexers imported, caches filled
            before = resident_mb()
            for _ in range(options.leak):
                render(reply)
            kept = resident_mb() - before
            print(f"{renderer}: {kept:.0f} MB more resident after {options.leak} renders")


if __name__ == "__main__":
    main()
