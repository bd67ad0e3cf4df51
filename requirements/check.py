"""Check the locks against pyproject.toml and the code (run by `make test`; offline).

1. Every range in pyproject.toml has an upper bound, and the pin in the lock satisfies it (a
   range changed without `make lock` fails here).
2. runtime.lock and local-embeddings.lock pin exactly what dev.lock pins for the same packages,
   and are hashed.
3. Every third-party module the code imports comes from a declared dependency: the apps' from
   [project] dependencies, tests' and benchmarks' from those or the dev extra. An app's import
   under ``if TYPE_CHECKING:`` never runs, so it may come from the dev extra (the type checker's
   stubs). A module that only arrives with another package (pywebpush brings requests) does not
   count. The files in OPTIONAL_FILES may import their extra's packages (they import them only
   when the extra is installed).
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
LOCKS = ROOT / "requirements"
# Where the project's own code lives; its first-party names are these and their top-level folders.
APP_ROOTS = ("talorys", "agent", "memory", "automations", "approvals", "backup", "manage.py")
DEV_ROOTS = ("tests", "benchmarks", "requirements")
# file -> the optional extra whose packages it may import.
OPTIONAL_FILES = {"talorys/providers/local_embedding.py": "local-embeddings"}
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def read_lock(name: str) -> dict[str, str]:
    pins: dict[str, str] = {}
    text = (LOCKS / name).read_text()
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text)
    for block in blocks:
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


def _type_checking_only(tree: ast.AST) -> set[int]:
    """The ids of the nodes inside ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``) blocks."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (
            (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
            or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")
        ):
            for statement in node.body:
                inside.update(id(child) for child in ast.walk(statement))
    return inside


def imported_modules(roots: tuple[str, ...], *, type_checking: bool = False) -> dict[str, str]:
    """Top-level names imported by absolute imports under roots -> one file that imports it.

    Imports the program runs, or with ``type_checking`` those only under ``if TYPE_CHECKING:``.
    """
    found: dict[str, str] = {}
    for root in roots:
        path = ROOT / root
        files = [path] if path.is_file() else sorted(path.rglob("*.py"))
        for file in files:
            tree = ast.parse(file.read_text(), filename=str(file))
            only_typing = _type_checking_only(tree)
            for node in ast.walk(tree):
                if (id(node) in only_typing) != type_checking:
                    continue
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    found.setdefault(name.split(".")[0], str(file.relative_to(ROOT)))
    return found


def first_party() -> set[str]:
    names = {Path(root).stem for root in APP_ROOTS + DEV_ROOTS}
    names |= {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()}
    for root in APP_ROOTS + DEV_ROOTS:  # helpers a test imports by their bare name
        if (ROOT / root).is_dir():
            names |= {p.stem for p in (ROOT / root).rglob("*.py")}
    return names


def check_imports(
    roots: tuple[str, ...],
    declared: set[str],
    label: str,
    *,
    type_checking: bool = False,
    optional: dict[str, set[str]] | None = None,
) -> list[str]:
    providers = importlib.metadata.packages_distributions()
    skip = set(sys.stdlib_module_names) | first_party() | {"__future__"}
    problems = []
    for module, where in sorted(imported_modules(roots, type_checking=type_checking).items()):
        if module in skip:
            continue
        dists = {canonicalize_name(d) for d in providers.get(module, [])}
        if not dists:
            problems.append(f"{where}: imports {module!r}, which no installed package provides")
        elif not dists & (declared | (optional or {}).get(where, set())):
            problems.append(
                f"{where}: imports {module!r} (from {', '.join(sorted(dists))}), "
                f"not declared in {label}"
            )
    return problems


def main() -> int:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime_reqs = project["dependencies"]
    extras = project["optional-dependencies"]
    # The dev extra names the other extras as talorys[name]: their requirements, checked as its own.
    dev_reqs = [
        line
        for req in extras["dev"]
        for line in (
            [extra for name in Requirement(req).extras for extra in extras[name]]
            if canonicalize_name(Requirement(req).name) == canonicalize_name(project["name"])
            else [req]
        )
    ]
    optional = {
        file: {canonicalize_name(Requirement(r).name) for r in extras[extra]}
        for file, extra in OPTIONAL_FILES.items()
    }
    runtime, dev = read_lock("runtime.lock"), read_lock("dev.lock")
    read_lock("bootstrap.lock")

    problems = check_ranges(runtime_reqs, runtime, "runtime.lock")
    problems += check_ranges(runtime_reqs + dev_reqs, dev, "dev.lock")
    local = read_lock("local-embeddings.lock")
    for lock, pins in (("runtime.lock", runtime), ("local-embeddings.lock", local)):
        for name, version in pins.items():
            if dev.get(name) != version:
                problems.append(f"{lock} pins {name}=={version}, dev.lock {dev.get(name)}")
    problems += check_ranges(
        runtime_reqs + extras["local-embeddings"], local, "local-embeddings.lock"
    )

    declared_runtime = {canonicalize_name(Requirement(r).name) for r in runtime_reqs}
    declared_dev = declared_runtime | {canonicalize_name(Requirement(r).name) for r in dev_reqs}
    problems += check_imports(
        APP_ROOTS, declared_runtime, "[project] dependencies", optional=optional
    )
    problems += check_imports(
        APP_ROOTS, declared_dev, "the dev extra (a type-checking import)", type_checking=True
    )
    problems += check_imports(DEV_ROOTS, declared_dev, "[project] dependencies or the dev extra")
    problems += check_imports(
        DEV_ROOTS, declared_dev, "[project] dependencies or the dev extra", type_checking=True
    )

    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"locks: {len(runtime)} runtime and {len(dev)} dev pins match pyproject.toml")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
