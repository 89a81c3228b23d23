"""What users of any command-line tool expect (issue 17, command line conventions): `--version`,
shell completion that completes (bash runs the script here), a manual page from the parser,
no colour when NO_COLOR is set and no escape sequences at all in piped output."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

import pytest
from cli_support import FAIL_KEYRING, SCRIPT, Loopback, loopback
from terminal_screen import Terminal

ESCAPE = "\x1b"
COLOUR = re.compile(r"\x1b\[[0-9;]*(?:3[0-9]|4[0-9]|9[0-7]|10[0-7])(?:;[0-9;]*)?m")
"""An SGR sequence setting a foreground or background colour (bold or reverse alone are no
colour)."""


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Loopback]:
    with loopback(tmp_path_factory.mktemp("service"), 30) as running:
        yield running


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TRACKER_")}
    clean.pop("NO_COLOR", None)
    return {**clean, "TRACKER_HOME": str(tmp_path / "home"), "PYTHON_KEYRING_BACKEND": FAIL_KEYRING}


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The console script with stdout and stderr piped: no terminal."""
    return subprocess.run(
        [str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_version_prints_the_installed_version(env: dict[str, str]) -> None:
    done = run("--version", env=env)
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        f"tracker-tui {version('tracker-tui')}\n",
        "",
    )


def complete(script: Path, *words: str) -> list[str]:
    """What bash offers for `tracker-tui WORDS<tab>`, by the sourced script's own function."""
    line = " ".join(("tracker-tui", *words))
    program = f"""
        source {script}
        function=$(complete -p tracker-tui | grep -o -- '-F [^ ]*' | cut -d' ' -f2)
        COMP_WORDS=(tracker-tui {" ".join(f"'{w}'" for w in words)})
        COMP_CWORD={len(words)}
        COMP_LINE='{line}'
        COMP_POINT=${{#COMP_LINE}}
        "$function" tracker-tui '{words[-1]}' '{(("tracker-tui", *words))[-2]}'
        printf '%s\\n' "${{COMPREPLY[@]}}"
    """
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", program],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout.split()


def test_the_bash_script_sources_and_completes_commands_and_options(
    env: dict[str, str], tmp_path: Path
) -> None:
    done = run("completion", "bash", env=env)
    assert done.returncode == 0, done.stderr
    script = tmp_path / "tracker-tui.bash"
    script.write_text(done.stdout)
    assert complete(script, "iss") == ["issues"]
    assert complete(script, "issues", "sh") == ["show"]
    assert set(complete(script, "completion", "")) == {"bash", "zsh", "fish"}
    assert "--version" in complete(script, "--v")
    assert {"config", "completion"} <= set(complete(script, "co"))


@pytest.mark.parametrize(
    ("shell", "checker"), [("zsh", ["zsh", "-n"]), ("fish", ["fish", "--no-execute"])]
)
def test_zsh_and_fish_scripts_name_every_command(
    env: dict[str, str], tmp_path: Path, shell: str, checker: list[str]
) -> None:
    done = run("completion", shell, env=env)
    assert done.returncode == 0, done.stderr
    for command in ("issues", "sync", "completion", "config", "man"):
        assert command in done.stdout
    if shutil.which(checker[0]):  # the syntax, where that shell is installed
        script = tmp_path / f"script.{shell}"
        script.write_text(done.stdout)
        subprocess.run([*checker, str(script)], check=True, timeout=30)


def test_an_unknown_shell_is_a_usage_error(env: dict[str, str]) -> None:
    done = run("completion", "powershell", env=env)
    assert done.returncode == 2
    assert "invalid choice: 'powershell'" in done.stderr


def test_the_manual_page_documents_every_command_in_roff(env: dict[str, str]) -> None:
    done = run("man", env=env)
    assert done.returncode == 0, done.stderr
    page = done.stdout
    assert page.startswith(".TH TRACKER\\-TUI")
    for section in (".SH NAME", ".SH SYNOPSIS", ".SH SEE ALSO"):
        assert section in page
    for command in ("issues", "completion", "config", "sync", "login"):
        assert f"\\fI\\,{command}\\/\\fR" in page
    if shutil.which("groff"):  # rendered as man would
        shown = subprocess.run(
            ["groff", "-man", "-Tutf8"], input=page, capture_output=True, text=True, check=True
        )
        assert "completion" in shown.stdout
        assert "warning" not in shown.stderr


def logged_in(env: dict[str, str], service: Loopback) -> dict[str, str]:
    return {**env, "TRACKER_SERVER": service.base_url, "TRACKER_API_KEY": service.key}


def test_piped_output_has_no_escape_sequences(env: dict[str, str], service: Loopback) -> None:
    online = logged_in(env, service)
    for args in (
        ("sync",),
        ("issues", "list"),
        ("issues", "show", "#3"),
        ("status",),
        ("--help",),
        ("issues", "list", "--status", "nope"),
    ):
        done = run(*args, env=online)
        assert ESCAPE not in done.stdout, args
        assert ESCAPE not in done.stderr, args


def sync_on_a_terminal(env: dict[str, str]) -> str:
    with Terminal([str(SCRIPT), "sync"], env=env, columns=100, rows=30) as terminal:
        assert terminal.wait_exit(timeout=120).code == 0
    return terminal.output().decode(errors="replace")


def test_no_color_leaves_colour_out_of_a_terminal_too(
    env: dict[str, str], service: Loopback, tmp_path: Path
) -> None:
    """On a terminal the sync shows a bar; NO_COLOR (any non-empty value, no-color.org) takes
    its colours away and leaves the bar. Each run syncs a home of its own from nothing."""
    coloured = sync_on_a_terminal(logged_in(env, service))
    assert COLOUR.search(coloured), "the bar has colours on a terminal"
    plain_env = {
        **logged_in(env, service),
        "TRACKER_HOME": str(tmp_path / "other"),
        "NO_COLOR": "1",
    }
    plain = sync_on_a_terminal(plain_env)
    assert "━" in plain, "still a bar"
    assert not COLOUR.search(plain)


@pytest.mark.parametrize("args", [(), ("demo", "--issues", "5")])
def test_the_app_without_a_terminal_says_so_instead_of_waiting(
    env: dict[str, str], service: Loopback, args: tuple[str, ...]
) -> None:
    """Keys come from stdin and the app draws on stderr: with neither a terminal (a script,
    a cron job) it used to wait for keys forever."""
    done = subprocess.run(
        [str(SCRIPT), *args],
        env=logged_in(env, service),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("tracker-tui: the app needs a terminal, and stdin and stderr")
    assert done.stdout == ""
