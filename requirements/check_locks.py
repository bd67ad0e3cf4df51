"""Check the locks against pyproject.toml (run by `make check-lock` and `make test`; offline).

1. Every range in pyproject.toml has an upper bound, and the pin in the lock satisfies it (a
   range changed without `make lock` fails here).
2. runtime.lock pins exactly what dev.lock pins for the same packages, and every lock is hashed.

Whether the code imports only what pyproject.toml declares is deptry's job (the Makefile's
check-lock target); neither deptry nor uv checks a pip-style lock against its ranges offline.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
LOCKS = ROOT / "requirements"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def read_lock(name: str) -> dict[str, str]:
    pins: dict[str, str] = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", (LOCKS / name).read_text()):
        match = PIN.match(block)
        if not match:
            continue
        if "--hash=sha256:" not in block:
            raise SystemExit(f"{name}: {match.group(1)} has no hash; run `make lock`")
        pins[canonicalize_name(match.group(1))] = match.group(2)
    return pins


def check_ranges(requirements: list[str], pins: dict[str, str], lock: str) -> list[str]:
    problems = []
    for line in requirements:
        req = Requirement(line)
        name = canonicalize_name(req.name)
        if not any(spec.operator in ("<", "<=", "==", "~=") for spec in req.specifier):
            problems.append(f"pyproject.toml: {req} has no upper bound (cap the next major)")
        if name not in pins:
            problems.append(f"{lock}: {req.name} is missing; run `make lock`")
        elif not req.specifier.contains(pins[name], prereleases=True):
            problems.append(f"{lock}: {req.name}=={pins[name]} is outside {req}; run `make lock`")
    return problems


def dev_requirements(project: dict) -> list[str]:
    """The dev extra's requirements, with the other extras it names as talorys[name] inlined."""
    extras = project["optional-dependencies"]
    lines = []
    for line in extras["dev"]:
        req = Requirement(line)
        if canonicalize_name(req.name) == canonicalize_name(project["name"]):
            lines += [extra for name in req.extras for extra in extras[name]]
        else:
            lines.append(line)
    return lines


def main() -> int:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime_reqs = project["dependencies"]
    runtime, dev = read_lock("runtime.lock"), read_lock("dev.lock")
    read_lock("bootstrap.lock")

    problems = check_ranges(runtime_reqs, runtime, "runtime.lock")
    problems += check_ranges(runtime_reqs + dev_requirements(project), dev, "dev.lock")
    for name, version in runtime.items():
        if dev.get(name) != version:
            problems.append(f"runtime.lock pins {name}=={version}, dev.lock {dev.get(name)}")

    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"locks: {len(runtime)} runtime and {len(dev)} dev pins match pyproject.toml")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
