"""The JSON Schema of config.toml shipped in the package: a valid schema, equal to what the code
would generate (every binding and column in it), and one that the files the client writes pass."""

from __future__ import annotations

import tomllib
from pathlib import Path

from jsonschema import Draft202012Validator

from accounts.profiles import AppPaths, Profile, ProfileStore
from tracker_tui.config_schema import SCHEMA_FILE, schema_text
from tracker_tui.data.config_check import load_schema, schema_bindings
from tracker_tui.data.settings import ProfileSettings
from tracker_tui.data.source import IssueQuery
from tracker_tui.data.views import SavedView


def test_the_shipped_schema_is_the_generated_one() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), (
        "config.schema.json is out of date: run `make config-schema`"
    )


def test_it_is_a_valid_schema_listing_every_binding() -> None:
    schema = load_schema()
    Draft202012Validator.check_schema(schema)
    ids = {binding.id: binding for binding in schema_bindings(schema)}
    assert ids["list.next"].keys == ("j", "down")
    assert ids["app.help"].keys == ("question_mark",)
    assert len(ids) >= 89


def test_a_file_the_client_writes_passes_it(tmp_path: Path) -> None:
    store = ProfileStore(AppPaths.from_env({"TRACKER_HOME": str(tmp_path)}))
    store.add(Profile("work", "https://tracker.example.com", "acme"))
    settings = ProfileSettings(store, "work")
    settings.save_theme("nord")
    settings.save_views([SavedView("Mine", IssueQuery(mine=True))])
    profile = store.get("work")
    store.update(profile.replace(ui={**profile.ui, "usage_alert_percent": 90}))
    document = tomllib.loads(store.paths.config_file.read_text())
    errors = list(Draft202012Validator(load_schema()).iter_errors(document))
    assert errors == []


def test_the_documented_example_passes_it() -> None:
    text = (Path(__file__).parents[1] / "docs" / "configuration.md").read_text()
    example = text.split("```toml\n", 1)[1].split("```", 1)[0]
    document = tomllib.loads(example)
    assert document["keymap"] and document["columns"]
    assert list(Draft202012Validator(load_schema()).iter_errors(document)) == []
