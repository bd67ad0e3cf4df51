"""`make bench`: every benchmark in benchmarks/, one table of figures beside their floors, and
benchmarks/results.json.

    .venv/bin/python benchmarks/run.py [--only NAME,...] [--full]
    .venv/bin/python benchmarks/run.py --markdown    # results.json as the README's table

Runs each script below in its own process, in order, with its output shown as it goes; each
reports its figures through benchmarks/_results.py into a file this script reads. PostgreSQL
(127.0.0.1:5432) and Redis (127.0.0.1:6379) are used when they answer; without PostgreSQL the
scripts that can run on SQLite do (said in the output) and the others are skipped with the
reason. ``--full`` adds the long variants: 10,000 automations due at once and a cold
``make run`` on a fresh clone. The default run takes about 5 minutes on 2 cores, ``--full``
about 6.

Figures are only comparable on the same machine with nothing else running: results.json names
the machine, the commit and when.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._database import postgres_admin_url  # noqa: E402
from benchmarks._results import RESULTS_ENV  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results.json"


@dataclass(frozen=True)
class Bench:
    name: str
    args: tuple[str, ...] = ()
    postgres: str = "prefer"  # "prefer" (else --sqlite), "needs" (else skipped), "never"
    redis: bool = False  # needs Redis
    full_only: bool = False

    @property
    def script(self) -> Path:
        return ROOT / "benchmarks" / f"{self.name.split(':')[0]}.py"


BENCHES = [
    Bench("turn_overhead", ("--runs", "100")),
    # Keyword recall at every turn, then the product's default: semantic recall on as well.
    Bench("turn_http", ("--keyword-recall",), postgres="needs", redis=True),
    Bench("turn_http:semantic", postgres="needs", redis=True),
    # /v1/chat/completions (the OpenAI-compatible endpoint) against the web chat, first text.
    Bench("openai_turn", postgres="needs", redis=True),
    Bench("embedders", ("--only", "process"), postgres="never"),
    Bench("api_throughput"),
    Bench("pages", ("--runs", "15")),
    Bench("recall", ("--quick",), postgres="never"),
    # LoCoMo's long chat histories (read from outside the clone; skipped without the file).
    Bench("recall_longchat", postgres="never"),
    Bench("dispatch", ("--count", "1000"), postgres="needs", redis=True),
    Bench("dispatch:10000", ("--count", "10000"), postgres="needs", redis=True, full_only=True),
    Bench("load", ("--seconds", "30"), postgres="needs", redis=True),
    # Embedded on SQLite always; the two-process variant needs PostgreSQL and Redis (it says so).
    Bench("reattach"),
    Bench("backup"),
    # A ChatGPT export imported and indexed (10 MiB here; run it alone for the 50 MiB figure).
    Bench("import_chatgpt", ("--mb", "10")),
    Bench("list_rows", ("--requests", "100")),
    # The owner's files: reading a 100-page PDF's text (in the project's environment: pypdf and
    # python-docx only), and search over 10,000 passages.
    Bench("files_extraction", postgres="never"),
    Bench("files_search"),
    Bench("startup", postgres="never"),
    Bench("startup:cold", ("--cold",), postgres="never", full_only=True),
]


def redis_answers() -> bool:
    import redis

    try:
        return bool(redis.Redis(host="127.0.0.1", port=6379, socket_timeout=2).ping())
    except redis.RedisError:
        return False


def machine() -> dict[str, object]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        kib = next(
            int(line.split()[1])
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        )
    except (OSError, StopIteration, ValueError):
        kib = 0
    return {
        "cpu": cpu,
        "cores": len(os.sched_getaffinity(0)),
        "memory_gib": round(kib / 1024 / 1024, 1),
        "python": platform.python_version(),
        "system": platform.platform(),
    }


def commit() -> str:
    """The commit measured, "-dirty" when files other than results.json (the last run's,
    rewritten by each run) differ from it."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout

    name = git("describe", "--always").strip() or "unknown"
    changed = git("status", "--porcelain", "--", ".", f":!{RESULTS.relative_to(ROOT)}").strip()
    return f"{name}-dirty" if changed else name


# How each output writes a ratio and a target: the terminal's table and the README's.
PLAIN = {
    "times": "x",
    "le": "<=",
    "ge": ">=",
    "gap": "",
    "unit": False,
    "met": " ok",
    "miss": " MISS",
}
README = {
    "times": "×",
    "le": "≤",
    "ge": "≥",
    "gap": " ",
    "unit": True,
    "met": ": met",
    "miss": ": **missed**",
}


def cells(row: dict, style: dict) -> tuple[str, str, str, str]:
    """One figure's value, floor, ratio and target, as ``style`` writes them."""
    unit = f" {row['unit']}" if row["unit"] else ""
    value = f"{row['value']:g}{unit}"
    floor = "" if row["floor"] is None else f"{row['floor']:g}{unit}"
    ratio = "" if row["ratio"] is None else f"{row['ratio']:g}{style['times']}"
    target = ""
    if row["target"] is not None:
        sign = style["le"] if row["better"] == "lower" else style["ge"]
        target = f"{sign}{style['gap']}{row['target']:g}" + (unit if style["unit"] else "")
        target += style["met"] if row["met"] else style["miss"]
    return value, floor, ratio, target


def table(figures: list[dict]) -> str:
    head = f"{'benchmark':15} {'figure':58} {'value':>12} {'floor':>10} {'ratio':>7} {'target':>9}"
    lines = [head, "-" * len(head)]
    for row in figures:
        value, floor, ratio, target = cells(row, PLAIN)
        lines.append(
            f"{row['benchmark']:15} {row['name'][:58]:58} {value:>12} {floor:>10} {ratio:>7} "
            f"{target:>9}"
        )
    return "\n".join(lines)


def markdown(report: dict) -> str:
    """results.json as the README's table."""
    m = report["machine"]
    lines = [
        f"Measured {report['when'][:10]} at `{report['commit']}` on {m['cores']} cores "
        f"({m['cpu']}), {m['memory_gib']} GiB, Python {m['python']}; "
        f"PostgreSQL {'yes' if report['services']['postgresql'] else 'no'}, "
        f"Redis {'yes' if report['services']['redis'] else 'no'}; "
        f"`make bench` took {report['seconds'] / 60:.1f} min.",
        "",
        "| benchmark | figure | value | floor | ratio | target |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    for row in report["figures"]:
        value, floor, ratio, target = cells(row, README)
        lines.append(
            f"| {row['benchmark']} | {row['name']} | {value} | {floor} | {ratio} | {target} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated names (e.g. pages,load)")
    parser.add_argument("--full", action="store_true", help="add the long variants")
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="print results.json as a Markdown table, run nothing",
    )
    options = parser.parse_args()
    if options.markdown:
        print(markdown(json.loads(RESULTS.read_text())))
        return 0
    only = {name for name in options.only.split(",") if name}
    postgres, redis_up = postgres_admin_url() is not None, redis_answers()
    print(
        f"PostgreSQL: {'yes' if postgres else 'no (SQLite where a benchmark can)'}; "
        f"Redis: {'yes' if redis_up else 'no'}",
        flush=True,
    )
    started = time.monotonic()
    figures: list[dict] = []
    runs: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory(prefix="talorys-bench-") as scratch:
        for bench in BENCHES:
            if only and bench.name not in only and bench.name.split(":")[0] not in only:
                continue
            if bench.full_only and not options.full and bench.name not in only:
                continue
            skip = ""
            if bench.postgres == "needs" and not postgres:
                skip = "needs PostgreSQL at 127.0.0.1:5432"
            elif bench.redis and not redis_up:
                skip = "needs Redis at 127.0.0.1:6379"
            if skip:
                print(f"\n== {bench.name}: skipped ({skip})", flush=True)
                runs[bench.name] = {"skipped": skip}
                continue
            args = list(bench.args)
            if bench.postgres == "prefer" and not postgres:
                args.append("--sqlite")
            out = Path(scratch) / f"{bench.name.replace(':', '-')}.jsonl"
            print(f"\n== {bench.name}: {bench.script.name} {' '.join(args)}", flush=True)
            began = time.monotonic()
            done = subprocess.run(
                [sys.executable, str(bench.script), *args],
                cwd=ROOT,
                env=os.environ | {RESULTS_ENV: str(out)},
            )
            seconds = round(time.monotonic() - began, 1)
            found = (
                [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
            )
            for row in found:
                row["benchmark"] = bench.name
            figures += found
            runs[bench.name] = {"seconds": seconds, "exit": done.returncode}
            print(f"-- {bench.name}: {seconds} s, exit {done.returncode}", flush=True)
    total = round(time.monotonic() - started, 1)
    report = {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "commit": commit(),
        "machine": machine(),
        "services": {"postgresql": postgres, "redis": redis_up},
        "seconds": total,
        "runs": runs,
        "figures": figures,
    }
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\n{table(figures)}\n")
    missed = [f"{row['benchmark']}: {row['name']}" for row in figures if row["met"] is False]
    failed = [name for name, run in runs.items() if run.get("exit") not in (0, None)]
    print(f"{len(figures)} figures in {total:.0f} s; written to {RESULTS.relative_to(ROOT)}")
    print(f"targets missed: {len(missed)}" + "".join(f"\n  {m}" for m in missed))
    if failed:
        print("benchmarks that failed: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
