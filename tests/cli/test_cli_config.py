"""`tracker-tui config`: `check` names every problem of a config file with its line (the
schema's, the profiles', the keymap's and the columns'), `schema` prints the shipped schema,
`path` says where the file is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import Cli, make_cli

BROKEN = """\
# my config
schema = 1
default_profile = "work"

[profiles.work]
server = "https://tracker.example.com/v1"
workspace = "acme"
key_storage = "keychain"

[keymap]
list.nxet = "n"
list.next = "e"
app.help = "F1"

[columns]
show = ["number", "titel"]
width = { status = 0 }
"""


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    return make_cli(tmp_path, capsys, monkeypatch)


def config_file(cli: Cli, text: str) -> Path:
    path = cli.home / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_check_names_every_problem_with_its_line(cli: Cli) -> None:
    path = config_file(cli, BROKEN)
    status, out, err = cli.run("config", "check")
    assert status == 1
    assert out.splitlines() == [
        f"{path}:8: profiles.work.key_storage: 'keychain' is not one of "
        "['keyring', 'insecure-file']",
        f"{path}:11: keymap: no binding has the id 'list.nxet'; nearest: list.next, "
        "list.edit, list.create",
        f"{path}:12: keymap: list.next (Next issue) and list.edit (Edit) would both be 'e'",
        f"{path}:13: keymap: app.help = 'F1': 'F1' is no key name; did you mean 'f1'?",
        f"{path}:16: columns: show: no column 'titel'; did you mean title?",
        f"{path}:17: columns: width.status must be a whole number of cells, 1 to 80",
    ]
    assert err == f"{path}: 6 problems\n"


def test_check_of_a_good_file_says_so(cli: Cli, tmp_path: Path) -> None:
    other = tmp_path / "mine.toml"
    other.write_text('[keymap.list]\nnext = "n"\nprevious = "p"\n\n[columns]\nshow = ["title"]\n')
    assert cli.run("config", "check", str(other)) == (0, "", f"{other}: fine\n")


@pytest.mark.parametrize(
    ("text", "line", "said"),
    [
        ("schema = 1\n[keymap\n", 2, "not valid TOML"),
        ("schema = 1\ntheme = 'nord'\n", 2, "unknown key(s) theme"),
        ('default_profile = "home"\n', 1, "default_profile 'home' is not a profile"),
        ('[profiles.w]\nworkspace = "a"\n', 1, "'server' is a required property"),
        ('[keymap]\n"list.open" = "o"\n', 2, "list.pick_sort (Sort by…) would both be 'o'"),
    ],
)
def test_check_finds_the_line(cli: Cli, text: str, line: int, said: str) -> None:
    path = config_file(cli, text)
    status, out, _err = cli.run("config", "check")
    assert status == 1
    assert out.startswith(f"{path}:{line}: ")
    assert said in out


def test_check_of_a_missing_file_is_a_usage_error(cli: Cli) -> None:
    status, out, err = cli.run("config", "check")
    assert (status, out) == (2, "")
    assert "no such file" in err


def test_schema_and_path(cli: Cli) -> None:
    status, out, _ = cli.run("config", "schema")
    assert status == 0
    assert json.loads(out)["title"] == "tracker-tui config.toml"
    status, out, _ = cli.run("config", "schema", "--path")
    assert json.loads(Path(out.strip()).read_text())["properties"]["keymap"]
    assert cli.run("config", "path") == (0, f"{cli.home / 'config' / 'config.toml'}\n", "")
