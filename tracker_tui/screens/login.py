"""First run: the server and the key, checked against the server before anything is saved.

The key field is masked. Before the user types, the screen says where the key will be kept
and why (the OS keyring when a real one is there, otherwise only a 0600 file the user agrees
to), from `accounts.doctor.doctor_report`. Validation is an async worker calling `GET /me`,
falling back to a one-record issue list for a server without that extension. Only a key the
server accepted is saved, in a thread (keyring and config file both block): the key first, the
profile last (`accounts.credentials.save_login`), so a failure never leaves a profile without
its key. Any failure is an inline message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import httpx
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Button, Checkbox, Footer, Input, Label, Static

from accounts.credentials import save_login
from accounts.doctor import Level, doctor_report
from accounts.errors import ConfigError, KeyNotKeptError
from accounts.keystore import KeyringStore
from accounts.profiles import Profile, normalize_server_url
from accounts.secret import Secret
from sync.client import ApiClient
from sync.errors import Forbidden, NotFound, SyncError, Unauthorized
from tracker_tui.screens.declared_keys import DeclaredKeyOrder
from tracker_tui.workers import describe


@dataclass(frozen=True)
class LoginSetup:
    """What the login screen needs from outside: tests swap the network and the home."""

    env: Mapping[str, str] | None = None
    """Environment to read TRACKER_HOME from (None: the process's)."""
    transport: httpx.AsyncBaseTransport | None = None
    """Replaces the network (tests: `httpx.ASGITransport` over the reference service)."""
    keyring: KeyringStore | None = None
    profile: str = "default"


KEY_NOT_KEPT = (
    "Cannot keep the key: the OS keyring refused it. Tick the box to keep it in a file only you "
    "can read, or set TRACKER_API_KEY in the environment. Nothing was saved."
)
"""The CLI's wording names `--insecure-storage`; here the checkbox is the way on."""


class LoginScreen(DeclaredKeyOrder[str | None]):
    """Dismisses with the saved profile's name, or None when the user quits."""

    HELP_GROUP: ClassVar[str] = "Login"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "log_in", "Check and save", priority=True, id="login.save"),
        Binding("escape", "dismiss(None)", "Quit", id="login.quit"),
    ]

    DEFAULT_CSS: ClassVar[str] = """
    LoginScreen {
        align: center middle;
        & > VerticalScroll {
            width: 80;
            max-width: 100%;
            height: auto;
            max-height: 100%;
            border: round $primary;
            padding: 0 1;
        }
        & .login-title { text-style: bold; margin-bottom: 1; }
        & .login-row { height: auto; margin-bottom: 1; }
        & .login-row > Label { width: 14; }
        & .login-row > Input { width: 1fr; }
        & .login-text { width: 1fr; height: auto; }
        & #login-storage { color: $text-muted; margin-bottom: 1; }
        & #login-error { color: $text-error; }
        & #login-state { color: $text-success; }
        & #login-save { margin-top: 1; }
    }
    """
    """Compact fields, one row each with its name, so the form and every message (wrapped,
    never cut) fit a terminal of 80 by 24."""

    @dataclass
    class StorageKnown(Message):
        text: str
        keyring_usable: bool

    @dataclass
    class Checked(Message):
        """The server answered: `workspace` on success, else `error` says what went wrong."""

        workspace: str | None
        error: str | None

    @dataclass
    class Saved(Message):
        profile: str | None
        error: str | None

    def __init__(self, setup: LoginSetup) -> None:
        super().__init__()
        self._setup = setup
        self.keyring_usable = False

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Label("Connect to your tracker", classes="login-title")
            with Horizontal(classes="login-row"):
                yield Label("Server URL")
                yield Input(
                    placeholder="https://tracker.example.com/v1 (ends in /v1)",
                    id="login-server",
                    compact=True,
                )
            with Horizontal(classes="login-row"):
                yield Label("API key")
                yield Input(placeholder="trk_…", password=True, id="login-key", compact=True)
            with Horizontal(classes="login-row"):
                yield Label("Profile name")
                yield Input(self._setup.profile, id="login-profile", compact=True)
            yield Static(
                "Checking where the key can be kept…", id="login-storage", classes="login-text"
            )
            yield Checkbox(
                "No keyring? Keep the key in a file only I can read (0600)",
                id="login-insecure",
                compact=True,
            )
            yield Static("", id="login-error", classes="login-text")
            yield Static("", id="login-state", classes="login-text")
            yield Button("Check and save", id="login-save", variant="primary", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        self._explain_storage()
        self.query_one("#login-server", Input).focus()

    @work(thread=True, exclusive=True, exit_on_error=False, group="login-storage")
    def _explain_storage(self) -> None:
        """Ask the keyring (it may block) and say what that means for the key."""
        try:
            lines = doctor_report(env=self._setup.env, keyring=self._setup.keyring)
        except Exception as error:
            self.post_message(self.StorageKnown(f"Cannot tell: {describe(error)}", False))
            return
        keyring = next((line for line in lines if line.topic == "keyring"), None)
        usable = keyring is not None and keyring.level is Level.OK
        why = keyring.text if keyring else "no keyring found"
        text = (
            f"The key will be kept in the OS keyring ({why}), never in the config file."
            if usable
            else f"No usable OS keyring ({why}). Tick the box to keep the key in a private "
            "file instead, or set TRACKER_API_KEY in the environment."
        )
        self.post_message(self.StorageKnown(text, usable))

    @on(StorageKnown)
    def show_storage(self, message: StorageKnown) -> None:
        self.keyring_usable = message.keyring_usable
        self.query_one("#login-storage", Static).update(message.text)
        self.query_one("#login-insecure", Checkbox).display = not message.keyring_usable

    @on(Input.Submitted)
    @on(Button.Pressed, "#login-save")
    def action_log_in(self) -> None:
        """Check the fields, then the key against the server."""
        server = self.query_one("#login-server", Input).value.strip()
        key = Secret(self.query_one("#login-key", Input).value)
        try:
            server = normalize_server_url(server)
        except ConfigError as error:
            self._fail(str(error))
            return
        if not key.reveal().strip():
            self._fail("Paste the API key (it starts with trk_).")
            return
        self._fail("")
        self.query_one("#login-state", Static).update("Checking the key with the server…")
        self._check(server, key)

    def _fail(self, text: str) -> None:
        self.query_one("#login-error", Static).update(text)
        if text:
            self.query_one("#login-state", Static).update("")

    @work(exclusive=True, exit_on_error=False, group="login-check")
    async def _check(self, server: str, key: Secret) -> None:
        """`GET /me`, or one issue when the server lacks /me; the answer as a message.

        The key stays a `Secret` all the way into the client: Textual's crash screen renders
        the locals of every frame, this worker's included."""
        try:
            async with ApiClient(server, key, transport=self._setup.transport) as client:
                try:
                    me = (await client.me()).value
                    workspace = me.workspace.id if me.workspace else "default"
                except (NotFound, Forbidden):
                    await client.list_issues(per_page=1)
                    workspace = "default"
        except Unauthorized:
            self.post_message(self.Checked(None, "The server refused this key (401)."))
            return
        except (SyncError, ValueError) as error:
            self.post_message(self.Checked(None, f"Could not check the key: {describe(error)}"))
            return
        self.post_message(self.Checked(workspace, None))

    @on(Checked)
    def save_when_valid(self, message: Checked) -> None:
        """The key was accepted: keep it and the profile (nothing was written before this)."""
        if message.error is not None or message.workspace is None:
            self._fail(message.error or "The server did not answer.")
            return
        try:
            profile = Profile(
                self.query_one("#login-profile", Input).value.strip() or "default",
                self.query_one("#login-server", Input).value.strip(),
                message.workspace,
            )
        except ConfigError as error:
            self._fail(str(error))
            return
        self.query_one("#login-state", Static).update("Key accepted; saving the profile…")
        self._save(
            profile,
            Secret(self.query_one("#login-key", Input).value.strip()),
            insecure=self.query_one("#login-insecure", Checkbox).value,
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="login-save")
    def _save(self, profile: Profile, key: Secret, *, insecure: bool) -> None:
        """Keep the key, then write the profile (keyring and config file both block)."""
        try:
            save_login(
                profile, key, insecure=insecure, env=self._setup.env, keyring=self._setup.keyring
            )
        except KeyNotKeptError:
            self.post_message(self.Saved(None, KEY_NOT_KEPT))
            return
        except ConfigError as error:
            self.post_message(self.Saved(None, describe(error)))
            return
        self.post_message(self.Saved(profile.name, None))

    @on(Saved)
    def finish(self, message: Saved) -> None:
        if message.error is not None:
            self._fail(message.error)
            return
        self.notify(f"Profile {message.profile} saved.")
        self.dismiss(message.profile)
