"""Every document the code points at can be opened from this repository.

The code explains itself by pointing at sections of the repository's own documents
(`docs/sync.md#cursors`): each such reference, in the code and in the documents' own links, must
name a file that exists and a heading in it, or a reader follows it to nothing. The design notes
the project was started from live outside the repository, so no file here may cite them by name:
the code says what it means in its own words and points at `docs/` for the detail.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from cache import Cache

ROOT = Path(__file__).resolve().parent.parent
SKIPPED = {"__pycache__", "build", "dist", "node_modules", "__snapshots__"}
"""Folders that hold no code or documents of ours (besides every folder whose name starts with
a dot: the venv, git, the tools' caches)."""
CODE = {".py", ".tcss", ".toml"}
FILE_SUFFIXES = {"py", "md", "tcss", "toml"}

CODE_REFERENCE = re.compile(r"(?<![\w/.-])((?:docs/[\w/-]+|README|CONTRIBUTING)\.md)(?:#([\w-]*))?")
"""`docs/sync.md#cursors`, `README.md#keys`, `CONTRIBUTING.md`, as code writes them."""
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")

PACKAGES = ("tracker_tui", "demo", "sync", "accounts", "cache", "issuefields", "server")
"""The packages whose modules the code and the documents name; `tests` and `benchmarks` are
named by path only."""
_TOP = "|".join(PACKAGES)
NAMED_PATH = re.compile(rf"`((?:{_TOP}|tests|benchmarks|docs)/[\w/.-]*)`")
"""`sync/push/reconcile.py`, `tests/terminal/`, as a docstring or a document names a file."""
NAMED_OBJECT = re.compile(rf"`((?:{_TOP})(?:\.\w+)+)(?:\(\))?`")
"""`sync.push.reconcile`, `cache.Cache`, `accounts.profiles.Profile.ui`."""

OUTSIDE_NAMES = re.compile(r"\b(?:SPEC|CONTRACT)\b|\b(?:SYNC|STYLE)\.md\b")
"""The design notes outside the repository, by the names the code used to cite them (the
published API, what it leaves open, the notes on sync and on style). Word boundaries and case
keep `SPECS`, `SPEC_ONLY` and a test's `spec` out of it."""


def files(suffixes: set[str]) -> Iterator[Path]:
    """The repository's files with these suffixes, in a stable order."""
    for path in sorted(ROOT.rglob("*")):
        parts = path.relative_to(ROOT).parts
        if any(part.startswith(".") or part in SKIPPED for part in parts[:-1]):
            continue
        if path.suffix in suffixes and path.is_file():
            yield path


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(document: Path) -> set[str]:
    """Every heading's anchor in a Markdown file (a repeated heading gets `-1`, `-2`, ...)."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in document.read_text().splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match is None:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def where(path: Path, text: str, offset: int) -> str:
    return f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, offset) + 1}"


def code_references() -> Iterator[tuple[str, Path, str]]:
    """(where, target file, anchor or "") for each reference to a document in the code."""
    for path in files(CODE):
        if path == Path(__file__).resolve():
            continue  # its own examples
        text = path.read_text()
        for match in CODE_REFERENCE.finditer(text):
            yield where(path, text, match.start()), ROOT / match.group(1), match.group(2) or ""


def markdown_links() -> Iterator[tuple[str, Path, str]]:
    """(where, target, anchor or "") for each relative link in the repository's Markdown."""
    for path in files({".md"}):
        text = path.read_text()
        for match in MARKDOWN_LINK.finditer(text):
            target = match.group(1)
            if re.match(r"[a-z]+:", target):
                continue
            name, _, anchor = target.partition("#")
            resolved = (path.parent / name).resolve() if name else path
            yield where(path, text, match.start()), resolved, anchor


def unresolved(references: list[tuple[str, Path, str]]) -> list[str]:
    problems = []
    cache: dict[Path, set[str]] = {}
    for place, target, anchor in references:
        if not target.exists():
            problems.append(f"{place}: no file {target.relative_to(ROOT)}")
        elif anchor and target.suffix == ".md":
            if target not in cache:
                cache[target] = anchors(target)
            if anchor not in cache[target]:
                problems.append(f"{place}: no heading #{anchor} in {target.relative_to(ROOT)}")
    return problems


def test_slug_follows_github() -> None:
    assert slug("Base address and authentication") == "base-address-and-authentication"
    assert slug("Current user (`GET /me`)") == "current-user-get-me"
    assert slug("ETags and If-Match") == "etags-and-if-match"
    assert slug("Limits: plans, per-endpoint") == "limits-plans-per-endpoint"


def test_code_points_at_sections_that_exist() -> None:
    references = list(code_references())
    assert len([each for each in references if each[2]]) >= 50, (
        "the scan finds the code's references to docs/ sections"
    )
    problems = unresolved(references)
    assert not problems, f"{len(problems)} references lead nowhere:\n" + "\n".join(problems)


def test_documents_link_to_sections_that_exist() -> None:
    links = list(markdown_links())
    assert links, "the scan finds the documents' links"
    problems = unresolved(links)
    assert not problems, f"{len(problems)} links lead nowhere:\n" + "\n".join(problems)


def has_path(found: object, names: list[str]) -> bool:
    """Whether `found.a.b...` exists (a dataclass's field counts, though it is no attribute)."""
    for name in names:
        dataclass = isinstance(found, type) and dataclasses.is_dataclass(found)
        if dataclass and name in {field.name for field in dataclasses.fields(found)}:
            return True
        if not hasattr(found, name):
            return False
        found = getattr(found, name)
    return True


def resolves(dotted: str, instances: dict[str, object]) -> bool:
    """Whether a module, or an attribute of one, has this name; or, for a name that reads as an
    attribute of a variable (`cache.push`: the `Cache` the code calls `cache`), that object."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        if has_path(module, parts[cut:]):
            return True
        break
    variable = instances.get(parts[0])
    return variable is not None and has_path(variable, parts[1:])


def test_named_modules_and_files_exist(tmp_path: Path) -> None:
    """A docstring or a document that names a module, a file or an object by its path names one
    that exists: the names left behind by a move (`sync.reconcile` after it went to
    `sync/push/`) are the stale docstrings a reader trips on."""
    this = Path(__file__).resolve()
    cache = Cache.open(tmp_path / "cache.db")
    instances: dict[str, object] = {"cache": cache}
    stale = []
    for path in files(CODE | {".md"}):
        if path == this:
            continue
        text = path.read_text()
        for match in NAMED_PATH.finditer(text):
            if not (ROOT / match.group(1)).exists():
                stale.append(f"{where(path, text, match.start())}: {match.group(1)}")
        for match in NAMED_OBJECT.finditer(text):
            if match.group(1).rpartition(".")[2] in FILE_SUFFIXES:
                continue  # `cache.py`: a file beside the one that names it
            if not resolves(match.group(1), instances):
                stale.append(f"{where(path, text, match.start())}: {match.group(1)}")
    cache.close()
    assert not stale, f"{len(stale)} names of nothing:\n" + "\n".join(stale)


@pytest.mark.parametrize("suffixes", [CODE, {".md"}], ids=["code", "markdown"])
def test_no_file_cites_documents_outside_the_repository(suffixes: set[str]) -> None:
    this = Path(__file__).resolve()
    found = []
    for path in files(suffixes):
        if path == this:
            continue
        text = path.read_text()
        for match in OUTSIDE_NAMES.finditer(text):
            found.append(f"{where(path, text, match.start())}: {match.group()}")
    assert not found, f"{len(found)} mentions a reader cannot open:\n" + "\n".join(found)
