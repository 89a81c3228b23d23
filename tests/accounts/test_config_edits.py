"""Changes to config.toml edit the file as the user wrote it: comments, order, blank lines and
the TUI's own tables (`keymap`, `columns`) stay; only the values that changed are rewritten."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from accounts.errors import ConfigFileError
from accounts.profiles import AppPaths, Profile, ProfileStore, parse_config

HAND_WRITTEN = """\
# My tracker setup, kept in git.
schema = 1
default_profile = "work"  # the one I use most

[profiles.work]
server = "https://tracker.example.com/v1"  # production
workspace = "acme"

# Keys for a Colemak keyboard.
[keymap]
list.next = "n"
list.previous = ["e", "up"]  # e is where k was

[columns]
show = ["number", "title", "status"]

[profiles.home]  # written after the keymap on purpose
server = "http://localhost:8000/v1"
workspace = "home"
"""


@pytest.fixture
def store(tmp_path: Path) -> ProfileStore:
    paths = AppPaths.from_env({"TRACKER_HOME": str(tmp_path)})
    paths.config_dir.mkdir(parents=True)
    paths.config_file.write_text(HAND_WRITTEN)
    return ProfileStore(paths)


def written(store: ProfileStore) -> str:
    return store.paths.config_file.read_text()


def test_the_tui_tables_are_read_as_written(store: ProfileStore) -> None:
    config = store.load()
    assert config.keymap == {"list": {"next": "n", "previous": ["e", "up"]}}
    assert config.columns == {"show": ["number", "title", "status"]}


def test_saving_a_theme_keeps_every_comment_and_the_order(store: ProfileStore) -> None:
    profile = store.get("work")
    store.update(profile.replace(ui={"theme": "nord"}))
    text = written(store)
    original = [line for line in HAND_WRITTEN.splitlines() if line]
    assert [line for line in text.splitlines() if line in original] == original
    assert "key_storage" not in text, "a default the user left out is not added"
    assert tomllib.loads(text)["profiles"]["work"]["ui"] == {"theme": "nord"}
    assert '[profiles.work.ui]\ntheme = "nord"\n\n# Keys' in text, "the new table stands apart"


def test_a_changed_value_keeps_the_comment_at_the_end_of_its_line(store: ProfileStore) -> None:
    store.set_default("home")
    assert 'default_profile = "home"  # the one I use most' in written(store).splitlines()


def test_removing_a_profile_edits_only_its_table(store: ProfileStore) -> None:
    store.remove("home")
    text = written(store)
    assert "[profiles.home]" not in text
    assert "# Keys for a Colemak keyboard." in text
    assert 'list.previous = ["e", "up"]  # e is where k was' in text
    assert parse_config(text, Path("c.toml")).keymap == store.load().keymap


def test_adding_a_profile_appends_it_and_keeps_the_rest(store: ProfileStore) -> None:
    before = written(store)
    store.add(Profile("third", "https://third.example.com", "t"))
    text = written(store)
    assert text.startswith(before.rstrip("\n"))
    assert tomllib.loads(text)["profiles"]["third"]["workspace"] == "t"


def test_keymap_and_columns_must_be_tables(tmp_path: Path) -> None:
    with pytest.raises(ConfigFileError, match="keymap must be a table"):
        parse_config('keymap = "n"\n', tmp_path / "c.toml")
    with pytest.raises(ConfigFileError, match="columns must be a table"):
        parse_config("columns = 3\n", tmp_path / "c.toml")


def test_a_file_without_the_tui_tables_keeps_its_comments_too(tmp_path: Path) -> None:
    paths = AppPaths.from_env({"TRACKER_HOME": str(tmp_path)})
    paths.config_dir.mkdir(parents=True)
    paths.config_file.write_text(HAND_WRITTEN.split("# Keys")[0])
    ProfileStore(paths).add(Profile("home", "http://localhost:8000", "home"))
    text = paths.config_file.read_text()
    assert text.startswith("# My tracker setup, kept in git.\n")
    assert 'server = "https://tracker.example.com/v1"  # production' in text
