"""Checking a config.toml before it is used: every problem, each with the line it is on.

Three passes, all reported together: the JSON Schema shipped with the package (the shape: which
keys exist, their types and ranges), the profiles as `accounts` reads them (server URLs, the
default profile), and the keymap and columns as the app applies them (unknown ids with the
nearest ones, clashes naming both bindings, column names). The bindings come from the schema's
`[keymap]` part, which lists each with its default keys, so no Textual is loaded.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from accounts.errors import ConfigError
from accounts.profiles import parse_config
from tracker_tui.data.columns import ColumnsError, parse_columns
from tracker_tui.data.keymap import BindingInfo, keymap_problems

SCHEMA_NAME = "config.schema.json"
APP_TABLES = ("keymap", "columns")


@dataclass(frozen=True, order=True)
class Problem:
    line: int
    """1-based; 0 when no line can be named (the file as a whole)."""
    message: str
    table: str = ""
    """The top-level table it is about ("keymap", "columns"), "" for the rest."""

    def at(self, source: Path | str) -> str:
        return f"{source}:{self.line}: {self.message}" if self.line else f"{source}: {self.message}"


def load_schema() -> dict[str, Any]:
    text = resources.files("tracker_tui").joinpath(SCHEMA_NAME).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def schema_bindings(schema: Mapping[str, Any]) -> list[BindingInfo]:
    """The app's bindings as the schema lists them (id, default keys, what they do)."""
    screens = schema["properties"]["keymap"]["properties"]
    return [
        BindingInfo(f"{part}.{action}", tuple(entry["default"].split(",")), entry["title"])
        for part, table in screens.items()
        if "properties" in table
        for action, entry in table["properties"].items()
    ]


def check_text(text: str) -> list[Problem]:
    """Every problem of a config file's text, in the order of its lines."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        found = re.search(r"at line (\d+)", str(error))
        return [Problem(int(found.group(1)) if found else 0, f"not valid TOML: {error}")]
    lines = key_lines(text)
    schema = load_schema()
    shape = list(_schema_problems(document, schema, lines))
    meaning = list(_meaning_problems(text, document, schema, lines))
    # Of the app's own tables, its checks say more (the nearest ids, the bindings that clash);
    # of the rest, the schema does (accounts stops at the first problem). Each stands where
    # the other found nothing.
    said = {problem.table for problem in meaning}
    problems = [p for p in shape if p.table not in said or p.table == ""]
    shaped = {p.table for p in shape}
    problems.extend(p for p in meaning if p.table != "" or "" not in shaped)
    return sorted(set(problems))


def _schema_problems(
    document: Mapping[str, Any], schema: Mapping[str, Any], lines: Mapping[tuple[str, ...], int]
) -> Iterator[Problem]:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema)
    for error in validator.iter_errors(document):
        path = [str(part) for part in error.absolute_path]
        where = ".".join(path) or "top level"
        table = path[0] if path and path[0] in APP_TABLES else ""
        said, key = _said(error)
        line = line_of([*path, key], lines) if key else line_of(path, lines)
        yield Problem(line, f"{where}: {said}", table)


def _said(error: Any) -> tuple[str, str | None]:
    """jsonschema's words, shorter where they quote a whole table back, and the key they are
    about when it is not the error's path (an unknown key: the table's path)."""
    if error.validator == "additionalProperties":
        names = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        known = sorted(error.schema.get("properties", {}))
        listed = f" (known: {', '.join(known)})" if known and len(known) <= 12 else ""
        return f"unknown key(s) {', '.join(names)}{listed}", names[0] if names else None
    if error.validator == "anyOf":
        return "must be keys (a string) or a list of keys", None
    return str(error.message), None


def _meaning_problems(
    text: str,
    document: Mapping[str, Any],
    schema: Mapping[str, Any],
    lines: Mapping[tuple[str, ...], int],
) -> Iterator[Problem]:
    try:
        parse_config(text, Path("config.toml"))
    except ConfigError as error:
        said = str(error).removeprefix("config.toml: ")
        yield Problem(_line_named(said, lines), said)
    table = document.get("keymap", {})
    if isinstance(table, Mapping):
        for problem in keymap_problems(table, schema_bindings(schema), "keymap"):
            yield from _each(problem, ("keymap",), lines)
    columns = document.get("columns", {})
    try:
        if isinstance(columns, Mapping):
            parse_columns(columns, "columns")
    except ColumnsError as error:
        yield from _each(str(error), ("columns",), lines)


def _each(
    message: str, table: tuple[str, ...], lines: Mapping[tuple[str, ...], int]
) -> Iterator[Problem]:
    """One problem per line of a message listing several; each on the line of the first id or
    key it names."""
    items = message.splitlines()
    for item in items[1:] if len(items) > 1 else items:
        item = item.strip()
        named = re.findall(r"([a-z_]+\.[a-z0-9_]+)", item)
        line = next(
            (lines[(*table, *n.split("."))] for n in named if (*table, *n.split(".")) in lines), 0
        )
        line = line or next((lines[(*table, n)] for n in named if (*table, n) in lines), 0)
        word = re.match(rf"{table[0]}: ([a-z_]+)", item)
        if not line and word:
            line = line_of([table[0], word.group(1)], lines)
        yield Problem(line or lines.get(table, 0), item, table[0])


def _line_named(message: str, lines: Mapping[tuple[str, ...], int]) -> int:
    """The line of the profile (or key) an accounts message names, if any."""
    key = re.match(r"(default_profile|schema)\b", message)
    if key:
        return lines.get((key.group(1),), 0)
    profile = re.search(r"profile '([^']+)'", message)
    return lines.get(("profiles", profile.group(1)), 0) if profile else 0


def line_of(path: Sequence[str], lines: Mapping[tuple[str, ...], int]) -> int:
    """The line of the longest part of `path` (keys and list indexes) the file names."""
    keys = [part for part in path if not part.isdigit()]
    for end in range(len(keys), 0, -1):
        found = lines.get(tuple(keys[:end]))
        if found:
            return found
    return 0


_KEY = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+))\s*')


def _dotted(text: str) -> tuple[str, ...] | None:
    """`a."b.c".d` as ("a", "b.c", "d"); None when it is not a key."""
    parts: list[str] = []
    rest = text
    while True:
        match = _KEY.match(rest)
        if not match:
            return None
        parts.append(next(group for group in match.groups() if group is not None))
        rest = rest[match.end() :]
        if not rest:
            return tuple(parts)
        if not rest.startswith("."):
            return None
        rest = rest[1:]


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Where each table and key is defined: its path to its first line (1-based). A line
    reader, not a parser: enough to name lines in messages for a file tomllib has read."""
    found: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        header = re.match(r"\[\[?(.*?)\]\]?\s*(?:#.*)?$", stripped)
        if header and not re.match(r"[^\[]*=", stripped):
            path = _dotted(header.group(1))
            if path is not None:
                table = path
                found.setdefault(table, number)
            continue
        if "=" in stripped:
            key = _dotted(stripped.split("=", 1)[0])
            if key is not None:
                for end in range(1, len(key) + 1):
                    found.setdefault((*table, *key[:end]), number)
    return found
