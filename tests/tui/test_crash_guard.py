"""The crash guard (issue 14, defect 1): a failure inside a screen is logged and shown, that
screen is closed and the app stays up; a failure the app cannot survive ends it with a non-zero
exit status. Failures are injected by replacing one function the screen calls with one that
raises, as a bug there would."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from tui_support import AppFactory, Notices, settle

from cache import Reads
from tracker_tui import launch
from tracker_tui.app import TrackerApp
from tracker_tui.crash_guard import exit_status
from tracker_tui.error_log import LOGGER_NAME, open_error_log
from tracker_tui.screens import issue_detail
from tracker_tui.screens.issue_detail import IssueDetailScreen
from tracker_tui.screens.issue_list import IssueListScreen
from tracker_tui.screens.labels_dialog import LabelsDialog
from tracker_tui.widgets import label_picker

SIZE = (120, 36)


class Boom(RuntimeError):
    """The injected bug."""


def boom(*_args: object, **_kwargs: object) -> Any:
    raise Boom("injected failure")


@pytest.fixture
def error_log(tmp_path: Path) -> Iterator[Path]:
    """The error log in tmp_path, detached again after the test."""
    path = open_error_log(tmp_path / "data")
    yield path
    logger = logging.getLogger(LOGGER_NAME)
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()


async def test_a_failing_widget_handler_closes_its_dialog_and_the_app_stays_up(
    app_factory: AppFactory,
    notices: Notices,
    error_log: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = app_factory(error_log=error_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        assert isinstance(app.screen, LabelsDialog)
        monkeypatch.setattr(label_picker, "rows_for", boom)
        await pilot.press("x")
        await settle(pilot)
        assert isinstance(app.screen, IssueDetailScreen)
        [(message, severity)] = [n for n in notices.messages if "failed" in n[0]]
        assert message.startswith("Labels dialog failed (Boom: injected failure). It was closed.")
        assert str(error_log) in message
        assert severity == "error"
        monkeypatch.undo()
        await pilot.press("l")  # the same dialog opens again and works
        await settle(pilot)
        assert isinstance(app.screen, LabelsDialog)
        await pilot.press("escape", "escape")
        await settle(pilot)
        assert isinstance(app.screen, IssueListScreen)
    assert exit_status(app) == 0
    logged = error_log.read_text()
    assert "Labels dialog failed" in logged
    assert "Traceback" in logged and "Boom: injected failure" in logged


async def test_a_failing_action_is_reported_and_the_screen_stays(
    app_factory: AppFactory, notices: Notices, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An action runs on the app's own message loop, which an error would end."""
    monkeypatch.setattr(IssueDetailScreen, "action_pick_priority", boom)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        detail = app.screen
        await pilot.press("p")
        await settle(pilot)
        assert app.screen is detail
        assert "Issue screen: pick priority failed (Boom: injected failure)." in notices.texts()
        await pilot.press("s")  # the other keys still work
        await settle(pilot)
        assert app.screen is not detail
        await pilot.press("escape", "escape")
        await settle(pilot)
        assert isinstance(app.screen, IssueListScreen)
    assert exit_status(app) == 0


async def test_a_failing_screen_is_closed_and_the_first_screen_reopened(
    app_factory: AppFactory, notices: Notices, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue screen fails drawing its issue: back to the list. The list itself fails: a
    fresh list replaces it."""
    monkeypatch.setattr(issue_detail, "fields_text", boom)
    app = app_factory()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first_list = app.screen
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is first_list
        assert any(text.startswith("Issue screen failed") for text in notices.texts())
        app.call_later(_fail_in, first_list)
        await settle(pilot)
        assert isinstance(app.screen, IssueListScreen)
        assert app.screen is not first_list
        await pilot.press("j", "k")
        await settle(pilot)
        assert isinstance(app.screen, IssueListScreen)
    assert exit_status(app) == 0


def _fail_in(screen: IssueListScreen) -> None:
    """Make `screen`'s own message loop run something that raises."""
    screen.call_later(boom)


async def test_an_error_the_app_cannot_survive_ends_it_with_a_non_zero_status(
    app_factory: AppFactory, error_log: Path
) -> None:
    """A callback on the app's own loop: logged, and the app ends with return code 1."""
    app = app_factory(error_log=error_log)
    with pytest.raises(Boom):
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            app.call_later(boom)
            await settle(pilot)
    assert exit_status(app) == 1
    assert "The app stopped on an error" in error_log.read_text()


async def test_failures_without_end_give_up_instead_of_looping(
    app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first screen that fails every time it opens is not reopened forever."""
    monkeypatch.setattr(IssueListScreen, "on_mount", boom)
    app = app_factory()
    with pytest.raises(Boom):
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
    assert exit_status(app) == 1


@pytest.mark.parametrize("fails", [False, True])
def test_the_process_exit_status_says_whether_the_app_ended_on_an_error(
    fails: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`run_for_profile` (what `tracker-tui` runs) returns 1 when the app ended on an error,
    and the error log lands under the data folder."""
    monkeypatch.setenv("TRACKER_HOME", str(tmp_path))
    monkeypatch.setenv("TRACKER_SERVER", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("TRACKER_API_KEY", "trk_" + "a" * 40)

    def run_headless(self: TrackerApp, **_kwargs: object) -> str | None:
        if fails:
            self.call_later(boom)
        else:
            self.call_later(self.exit)
        return App.run(self, headless=True, size=SIZE)

    monkeypatch.setattr(TrackerApp, "run", run_headless)
    status = launch.run_for_profile(None)
    assert status == (1 if fails else 0)
    log = tmp_path / "data" / "tracker-tui.log"
    assert log.exists() == fails  # nothing is written where nothing failed
    if fails:
        assert "Boom: injected failure" in log.read_text()
        assert "trk_aaaa" not in log.read_text()


def test_the_error_log_masks_anything_shaped_like_a_key(error_log: Path) -> None:
    key = "trk_" + "Zz09_-" * 7
    try:
        raise Boom(f"refused {key}")
    except Boom as error:
        logging.getLogger(LOGGER_NAME).error("sending failed", exc_info=error)
    logged = error_log.read_text()
    assert "refused trk_…" in logged
    assert key not in logged and "Zz09" not in logged
    assert error_log.stat().st_mode & 0o777 == 0o600


async def test_a_worker_failing_on_a_bug_is_shown_and_logged_with_its_traceback(
    app_factory: AppFactory, notices: Notices, error_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = app_factory(error_log=error_log)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        monkeypatch.setattr(Reads, "issue", boom)
        await pilot.press("enter")
        await settle(pilot)
        assert "Could not read the issue: injected failure" in notices.texts()
        assert isinstance(app.screen, IssueDetailScreen)
    logged = error_log.read_text()
    assert "Could not read the issue" in logged and "Traceback" in logged
