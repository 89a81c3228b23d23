"""The demo's "another user": a colleague who edits issues every few seconds.

Live updates and conflicts only show when someone else changes the data, so the demo can run
a second member of the workspace who, through the same public API, nudges the priority or the
title of a few random issues now and then. Given the demo user's key (`notify`), one edit in
two goes to an issue assigned to that user, now and then with a comment, so the inbox (`i`)
fills as the demo runs.
"""

from __future__ import annotations

import random
import threading

import httpx

from issuefields import PRIORITY
from server.keys import create_key


class AnotherUser:
    """Edits issues on `base_url` every `every` seconds until stopped."""

    def __init__(
        self,
        db_path: str,
        workspace: str,
        base_url: str,
        *,
        every: float = 4.0,
        notify: str | None = None,
    ) -> None:
        self._key = create_key(db_path, workspace, "colleague", user="Grace Hopper (demo)")
        self._notify = notify
        self._user: str | None = None
        self._base_url = base_url
        self._every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="another-user", daemon=True)
        self._random = random.Random(7)
        self.edits = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        headers = {"Authorization": f"Bearer {self._key}"}
        with httpx.Client(base_url=self._base_url, headers=headers, timeout=10) as client:
            self._user = self._demo_user(client)
            while not self._stop.wait(self._every):
                try:
                    self._edit_some(client)
                except httpx.HTTPError:
                    continue

    def _demo_user(self, client: httpx.Client) -> str | None:
        """The id of the user whose key `notify` is, or None."""
        if self._notify is None:
            return None
        try:
            answer = client.get("/me", headers={"Authorization": f"Bearer {self._notify}"})
            user = answer.json().get("user") if answer.is_success else None
        except (httpx.HTTPError, ValueError):
            return None
        return str(user["id"]) if isinstance(user, dict) and "id" in user else None

    def _edit_some(self, client: httpx.Client) -> None:
        params: dict[str, str | int] = {"per_page": 100}
        if self._user is not None and self._random.random() < 0.5:
            params["assignee"] = self._user
        page = client.get("/issues", params=params).json()
        issues = page.get("data", [])
        for issue in self._random.sample(issues, k=min(2, len(issues))):
            change: dict[str, str] = {"priority": self._random.choice(PRIORITY.values)}
            if self._random.random() < 0.3:
                change = {"title": f"{issue['title'].removesuffix(' (edited)')} (edited)"[:255]}
            if client.patch(f"/issues/{issue['id']}", json=change).is_success:
                self.edits += 1
            if "assignee" in params and self._random.random() < 0.3:
                body = {"issue_id": issue["id"], "body": "Had a look: see my change above."}
                client.post("/comments", json=body)
