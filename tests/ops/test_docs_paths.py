"""Every repository path the docs and the code's comments name exists, so a newcomer who follows
one lands on a file. A path is either whole (``talorys/lib/tools.py``, from a top-level folder of
the repository) or the tail of one inside an app (``runner/db.py``, ``workspace/models.py``): a
tail must end some file of the repository. Strings in code are not read: ``"memory/list.html"``
is a template name, resolved by Django, and the tests that render it check it."""

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ("talorys", "agent", "memory", "approvals", "automations", "backup", "imports")
SKIP = {".git", ".venv", "data", "node_modules", "__pycache__"}
TOP = sorted(p.name for p in ROOT.iterdir() if p.is_dir() and p.name not in SKIP)
EXTENSIONS = "py|js|css|html|md|toml|yaml|yml|json|lock|in|txt|sh"
# A path: folders, then a file with one of the extensions, not inside a URL or a longer path.
PATH = re.compile(rf"(?<![\w./:-])((?:[A-Za-z_][\w-]*/)+[\w.-]+\.(?:{EXTENSIONS}))(?![\w/-])")
# Paths named on purpose though they are not in the repository, each with why.
HYPOTHETICAL = {
    # Written by `make bench` (README.md, "Benchmarks"; architecture.md); not committed.
    "benchmarks/results.json",
}


def repository_files() -> list[str]:
    files = []
    for top in TOP:
        for path in (ROOT / top).rglob("*"):
            if path.is_file() and not SKIP.intersection(path.parts):
                files.append(str(path.relative_to(ROOT)))
    return files


def comments_and_docstrings(source: str) -> list[tuple[int, str]]:
    """The comments and the docstrings of a module, with the line each starts on."""
    found = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                found.append((first.lineno, first.value.value))
    return found


def texts() -> list[tuple[str, int, str]]:
    """(file, line, text) for the README, docs/*.md and the apps' comments and docstrings."""
    found = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for number, line in enumerate(doc.read_text().splitlines(), start=1):
            found.append((str(doc.relative_to(ROOT)), number, line))
    for app in APPS:
        for module in sorted((ROOT / app).rglob("*.py")):
            if "migrations" in module.parts:
                continue
            name = str(module.relative_to(ROOT))
            found += [(name, n, text) for n, text in comments_and_docstrings(module.read_text())]
    return found


def exists(path: str, files: list[str]) -> bool:
    if path.split("/")[0] in TOP:
        return (ROOT / path).exists()
    return any(file.endswith("/" + path) for file in files)


def test_every_path_named_in_docs_and_comments_exists():
    files = repository_files()
    missing = [
        f"{where}:{line}: {path}"
        for where, line, text in texts()
        for path in PATH.findall(text)
        if path not in HYPOTHETICAL and not exists(path, files)
    ]
    assert not missing, "paths that are not in the repository:\n" + "\n".join(missing)


def test_the_hypothetical_paths_are_still_named():
    named = {path for _, _, text in texts() for path in PATH.findall(text)}
    assert not HYPOTHETICAL - named, f"drop from HYPOTHETICAL: {HYPOTHETICAL - named}"


def test_the_check_sees_paths_in_all_three_places():
    """The pattern is not too strict to find anything: a whole path in the README, a tail in
    the architecture doc and a path in a docstring are all read."""
    named = {(where, path) for where, _, text in texts() for path in PATH.findall(text)}
    assert ("README.md", "docs/architecture.md") in named
    assert ("docs/architecture.md", "runner/db.py") in named
    assert ("approvals/services.py", "talorys/lib/tools.py") in named
