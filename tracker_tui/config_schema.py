"""The JSON Schema of config.toml, built from the code it describes, and the file it ships in.

The schema is what editors (taplo, VS Code's Even Better TOML) complete and check config.toml
with, and what `tracker-tui config check` validates a file against. Its `[keymap]` part lists
every binding of the app (id, what it does, its default keys) and its `[columns]` part every
column of the field table, so it is generated: `make config-schema` writes
`tracker_tui/config.schema.json`, and tests/test_config_schema.py fails while the shipped file
differs from what the code would write (a binding added without regenerating, say). The check
reads the shipped file, so it loads no Textual.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from accounts.profiles import SCHEMA_VERSION, KeyStorage
from tracker_tui.bindings_table import app_bindings
from tracker_tui.data.columns import COLUMN_FIELDS, WIDEST, column_name
from tracker_tui.data.usage_alert import ALERT_SETTING

SCHEMA_FILE = Path(__file__).with_name("config.schema.json")

KEYS = {
    "description": 'Keys, comma-separated ("n" or "n,down"), or a list of keys',
    "anyOf": [
        {"type": "string", "minLength": 1},
        {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
    ],
}


def build_schema() -> dict[str, Any]:
    """The schema as the code now stands."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "tracker-tui config.toml",
        "description": "docs/configuration.md describes each key. API keys are never stored here.",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "schema": {
                "description": "The file's format version",
                "type": "integer",
                "minimum": 1,
                "maximum": SCHEMA_VERSION,
            },
            "default_profile": {
                "description": "The profile used without --profile; one of [profiles]",
                "type": "string",
            },
            "profiles": {
                "description": "Servers and workspaces, by profile name",
                "type": "object",
                "propertyNames": {"pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"},
                "additionalProperties": {"$ref": "#/$defs/profile"},
            },
            "keymap": _keymap(),
            "columns": _columns(),
        },
        "$defs": {"profile": _profile(), "keys": KEYS},
    }


def _profile() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["server", "workspace"],
        "additionalProperties": False,
        "properties": {
            "server": {
                "description": "The API's base URL (http or https; /v1 is added)",
                "type": "string",
                "pattern": "^https?://",
            },
            "workspace": {"description": "The workspace's slug", "type": "string", "minLength": 1},
            "key_storage": {
                "description": "Where the key is kept: the OS keyring, or a file of mode 0600",
                "enum": [storage.value for storage in KeyStorage],
                "default": KeyStorage.KEYRING.value,
            },
            "ui": {
                "description": "The app's settings for this profile (it writes them itself)",
                "type": "object",
                "properties": {
                    "theme": {"description": "A Textual theme's name", "type": "string"},
                    "read_only": {"type": "boolean"},
                    ALERT_SETTING: {
                        "description": "Warn past this share of the day's rate limit, in %",
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 100,
                    },
                    "views": {"description": "Saved views, on the keys 1 to 9"},
                },
            },
        },
    }


def _keymap() -> dict[str, Any]:
    """One table per screen, one entry per binding: `list.next = "n"` and `[keymap.list]`
    alike; the quoted form `"list.next" = "n"` too."""
    screens: dict[str, dict[str, Any]] = {}
    flat: dict[str, Any] = {}
    for binding in app_bindings():
        part, action = binding.id.split(".", 1)
        entry = {
            "$ref": "#/$defs/keys",
            "title": binding.description,
            "description": f"{binding.description} (default: {', '.join(binding.keys)})",
            "default": ",".join(binding.keys),
        }
        screen = screens.setdefault(
            part, {"type": "object", "additionalProperties": False, "properties": {}}
        )
        screen["properties"][action] = entry
        flat[binding.id] = {"$ref": f"#/properties/keymap/properties/{part}/properties/{action}"}
    return {
        "description": "Keys by binding id (<screen>.<action>); a value replaces all its keys",
        "type": "object",
        "additionalProperties": False,
        "properties": {**screens, **flat},
    }


def _columns() -> dict[str, Any]:
    names = sorted({name for f in COLUMN_FIELDS for name in (column_name(f), f.member, f.word)})
    name = {"enum": names}
    return {
        "description": "The issue list's columns",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "show": {
                "description": "Which columns show, in this order; the title is required",
                "type": "array",
                "items": name,
                "uniqueItems": True,
                "contains": {"const": "title"},
            },
            "drop_first": {
                "description": "Shown columns that give way first as the terminal narrows",
                "type": "array",
                "items": name,
                "uniqueItems": True,
            },
            "width": {
                "description": "Cells per column; the title's is the least it keeps",
                "type": "object",
                "propertyNames": name,
                "additionalProperties": {"type": "integer", "minimum": 1, "maximum": WIDEST},
            },
        },
    }


def schema_text() -> str:
    return json.dumps(build_schema(), indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    """Write the schema file (`make config-schema`)."""
    SCHEMA_FILE.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {SCHEMA_FILE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
