"""First run: the login screen checks the key against the reference service, in-process."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import httpx
import pytest
from keyring.backends.fail import Keyring as FailKeyring
from textual.widgets import Checkbox, Input, Static
from tui_support import box_text, fixed_clock, screen_lines, settle

from accounts.keystore import KeyringStore
from accounts.profiles import AppPaths, ProfileStore
from server.app import create_app
from server.seed import seed_workspace
from tracker_tui.app import make_app
from tracker_tui.screens.login import KEY_NOT_KEPT, LoginScreen, LoginSetup

SIZE = (100, 40)
SERVER = "http://test/v1"


@dataclass
class Service:
    setup: LoginSetup
    key: str
    home: Path


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    """The reference service over a seeded SQLite file, reached through ASGITransport; a
    keyring that refuses (as on a headless box), and TRACKER_HOME in tmp_path."""
    db = tmp_path / "server.db"
    key = seed_workspace(db, "acme", 3)
    setup = LoginSetup(
        env={"TRACKER_HOME": str(tmp_path / "home")},
        transport=httpx.ASGITransport(create_app(db)),
        keyring=KeyringStore(get_backend=FailKeyring),
    )
    yield Service(setup, key, tmp_path / "home")


async def fill_in(pilot: object, key: str) -> None:
    app = pilot.app  # type: ignore[attr-defined]
    app.screen.query_one("#login-server", Input).value = SERVER
    app.screen.query_one("#login-key", Input).value = key
    app.screen.query_one("#login-insecure", Checkbox).value = True
    await pilot.press("ctrl+s")  # type: ignore[attr-defined]
    await settle(pilot)


async def test_a_bad_key_is_an_inline_error_and_nothing_is_saved(service: Service) -> None:
    app = make_app(login=service.setup, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, LoginScreen)
        assert app.screen.query_one("#login-key", Input).password
        storage = str(app.screen.query_one("#login-storage", Static).render())
        assert "No usable OS keyring" in storage
        await fill_in(pilot, "trk_" + "x" * 40)
        error = str(app.screen.query_one("#login-error", Static).render())
        assert "refused this key" in error
        assert isinstance(app.screen, LoginScreen)
    assert not AppPaths.from_env(service.setup.env).config_file.exists()


async def test_a_good_key_saves_the_profile_and_its_key(service: Service) -> None:
    app = make_app(login=service.setup, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await fill_in(pilot, service.key)
        await settle(pilot)
    assert app.return_value == "default"
    paths = AppPaths.from_env(service.setup.env)
    profile = ProfileStore(paths).get("default")
    assert profile.server == SERVER
    assert profile.key_storage == "insecure-file"
    assert service.key not in paths.config_file.read_text()
    stored = paths.keys_dir / "default"
    assert stored.exists() or any(paths.keys_dir.iterdir())


async def test_a_malformed_url_is_refused_before_any_request(service: Service) -> None:
    app = make_app(login=service.setup, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.screen.query_one("#login-server", Input).value = "not a url"
        app.screen.query_one("#login-key", Input).value = service.key
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert str(app.screen.query_one("#login-error", Static).render())


async def test_a_refused_keyring_without_the_file_saves_no_profile(service: Service) -> None:
    """The key is good but cannot be kept (no keyring, file not allowed): the error says how to
    go on, and no profile is written that would lack its key."""
    app = make_app(login=service.setup, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.screen.query_one("#login-server", Input).value = SERVER
        app.screen.query_one("#login-key", Input).value = service.key
        assert not app.screen.query_one("#login-insecure", Checkbox).value
        await pilot.press("ctrl+s")
        await settle(pilot)
        error = str(app.screen.query_one("#login-error", Static).render())
        assert "Cannot keep the key" in error
        assert isinstance(app.screen, LoginScreen)
    paths = AppPaths.from_env(service.setup.env)
    assert ProfileStore(paths).load().profiles == {}
    assert not paths.keys_dir.exists() or not any(paths.keys_dir.iterdir())


async def test_the_keyring_error_is_whole_and_the_form_fits_80_by_24(service: Service) -> None:
    """The longest state of the form (no keyring: its explanation, the box to tick, and the
    refusal) fits a terminal of 80 by 24, each message wrapped, none cut."""
    app = make_app(login=service.setup, clock=fixed_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.screen.query_one("#login-server", Input).value = SERVER
        app.screen.query_one("#login-key", Input).value = service.key
        await pilot.press("ctrl+s")
        await settle(pilot)
        lines = screen_lines(app)
        assert len(lines) == 24 and all(len(line) <= 80 for line in lines)
        box = [line for line in lines if line.startswith(("│", "╭", "╰"))]
        assert box[0].startswith("╭") and box[0].endswith("╮")
        assert box[-1].startswith("╰") and box[-1].endswith("╯")
        text = box_text(box)
        assert KEY_NOT_KEPT in text
        assert "TRACKER_API_KEY in the environment." in text  # the keyring explanation
        assert "Keep the key in a file only I can read" in text
        assert "Check and save" in text


WATCHED = tuple(
    str(Path(module.__file__).resolve().parent)
    for module in (
        __import__("tracker_tui"),
        __import__("sync"),
        __import__("accounts"),
        __import__("textual"),
    )
    if module.__file__
)
"""Frames of these packages are what the app's crash screen would render with their locals."""


def holds(value: object, key: str) -> bool:
    """Whether `value`, or an item of a container it is, shows `key` as plain text."""
    if isinstance(value, str | bytes):
        return key in (value if isinstance(value, str) else value.decode("latin-1"))
    if isinstance(value, dict):
        return any(holds(item, key) for pair in value.items() for item in pair)
    if isinstance(value, list | tuple | set):
        return any(holds(item, key) for item in value)
    return False


class FrameWatch(httpx.AsyncBaseTransport):
    """The service's transport, looking up the stack at every request: which of the app's
    frames are on the way (`seen`), and which of their locals hold the key (`holding`)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, key: str) -> None:
        self._inner = inner
        self._key = key
        self.seen: set[str] = set()
        self.holding: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename.startswith(WATCHED):
                self.seen.add(frame.f_code.co_qualname)
                self.holding.extend(
                    f"{frame.f_code.co_qualname}: {name}"
                    for name, value in frame.f_locals.items()
                    if holds(value, self._key)
                )
            frame = frame.f_back
        return await self._inner.handle_async_request(request)


async def test_no_frame_on_the_way_to_the_server_holds_the_key(service: Service) -> None:
    """The login worker checks the key with `GET /me`: every frame of the app, the worker's
    own included, holds it masked (a `Secret`), so a crash screen rendering their locals
    cannot show it. The worker held it as a plain str."""
    assert service.setup.transport is not None
    watch = FrameWatch(service.setup.transport, service.key)
    app = make_app(login=replace(service.setup, transport=watch), clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await fill_in(pilot, service.key)
        await settle(pilot)
    assert app.return_value == "default"
    assert "LoginScreen._check" in watch.seen and "ApiClient._exchange" in watch.seen
    assert watch.holding == []
