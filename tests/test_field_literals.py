"""Each fact about an issue is written once: in the field table (`issuefields`).

A status, a priority, a sort key or a label of a field or a value, written as a string anywhere
else in the client, is a second copy that will drift from the table (the statuses were written
four times, the priorities five). This scans the client's code for them: string constants only,
not docstrings, so prose may still name a status.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import issuefields
from issuefields import ISSUE_FIELDS, PRIORITY, SORTS, STATUS

ROOT = Path(__file__).resolve().parent.parent
CLIENT = ("tracker_tui", "demo", "sync", "cache", "issuefields")
TABLE = Path(issuefields.__file__).resolve()

HOMONYMS = {
    "none": "also the word for null (`--assignee none`) and other vocabularies' nothing",
    "done": "also an outbox entry's state (cache.models.EntryState)",
}
"""Values that are also ordinary words the client uses in another sense: looked for, they would
flag those senses; every other value of their lists still catches a copy of the list."""


def vocabulary() -> dict[str, str]:
    """Every string the table owns, with what it is."""
    words: dict[str, str] = {}
    for field in ISSUE_FIELDS:
        words[field.label] = f"the label of {field.member}"
        if field.empty != "—":
            words[field.empty] = f"how no {field.member} reads"
        for choice in field.choices:
            words[choice.value] = f"a value of {field.member}"
            words[choice.label] = f"the label of {field.member} {choice.value}"
    for sort in SORTS:
        words.setdefault(sort.key, "a sort key")
        words.setdefault(sort.label, f"the label of sort {sort.key}")
    members = {name for field in ISSUE_FIELDS for name in (field.member, field.word)}
    return {
        word: what for word, what in words.items() if word not in members and word not in HOMONYMS
    }


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the constants that are docstrings (of the module, a class or a function) or
    the string right after an assignment (an attribute's docstring)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for index, statement in enumerate(body):
            if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)):
                continue
            first = index == 0 and isinstance(
                node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
            )
            after_assignment = index > 0 and isinstance(body[index - 1], ast.Assign | ast.AnnAssign)
            if first or after_assignment:
                found.add(id(statement.value))
    return found


ATTRIBUTE_LISTS = {"__slots__", "_fields"}
"""Class attributes whose strings are a class's attribute names (`cache.models.Frozen`): Python
identifiers, which an attribute named like a sort key (`ApplyResult.updated`) may share."""


def _attribute_names(tree: ast.AST) -> set[int]:
    """The ids of the string constants listed in a class's `__slots__` or `_fields`."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign):
            continue
        named = {target.id for target in node.targets if isinstance(target, ast.Name)}
        if named & ATTRIBUTE_LISTS and isinstance(node.value, ast.Tuple | ast.List):
            found.update(id(element) for element in node.value.elts)
    return found


def copies(path: Path, words: dict[str, str], root: Path = ROOT) -> Iterator[str]:
    """`file:line: 'word' (what it is)` for each string constant of `path` the table owns."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    prose = _docstrings(tree) | _attribute_names(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value in words
            and id(node) not in prose
        ):
            where = path.relative_to(root)
            yield f"{where}:{node.lineno}: {node.value!r} ({words[node.value]})"


def client_files() -> list[Path]:
    return sorted(
        path
        for package in CLIENT
        for path in (ROOT / package).rglob("*.py")
        if path.resolve() != TABLE
    )


def test_no_status_priority_sort_key_or_label_is_written_outside_the_table() -> None:
    words = vocabulary()
    found = [line for path in client_files() for line in copies(path, words)]
    assert not found, "\n".join(found)


def test_the_vocabulary_holds_what_the_table_owns() -> None:
    words = vocabulary()
    assert {"backlog", "in_progress", "canceled", "urgent", "low"} <= set(words)
    assert {"In progress", "No priority", "Unassigned", "Labels", "Last updated"} <= set(words)
    assert "updated" in words  # a sort key that is no member
    assert not {"status", "priority", "project_id", "project", "done", "none"} & set(words)
    assert set(STATUS.values) - set(words) == {"done"}
    assert set(PRIORITY.values) - set(words) == {"none"}


SAMPLE = '''"""A module naming "todo" in prose."""
STATES = ("todo", "in_review")
"""The states, "backlog" first."""


def f(x):
    """Returns "Urgent"."""
    return {"priority": x, "label": f"Status {x}"} if x else "Status"


class Row:
    __slots__ = ("updated",)
'''


@pytest.mark.parametrize(
    ("word", "flagged"),
    [
        ("todo", True),
        ("in_review", True),
        ("backlog", False),
        ("Urgent", False),
        ("Status", True),
        ("updated", False),
    ],
)
def test_strings_in_code_are_flagged_and_prose_is_not(
    tmp_path: Path, word: str, flagged: bool
) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(SAMPLE, encoding="utf-8")
    found = list(copies(sample, vocabulary(), root=tmp_path))
    assert any(f"{word!r}" in line for line in found) is flagged, found
