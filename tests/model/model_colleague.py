"""The colleague of the model: a user of the same workspace writing straight to the service
(no cache, no faults), on the records as the service holds them: identical issues and
comments, edits of the same fields the clients edit, deletes.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule
from model_world import COLLEAGUE, World

PICK = st.integers(0, 50)
TITLES = ("Weekly review", "Standup notes")
"""Templated titles: creates with them are identical unless their priority differs."""
BODIES = ("+1", "LGTM")
TITLE = st.sampled_from((0, 0, 1, 2))
"""A create's title: mostly templated (so creates are often identical), else a new one."""
CREATE_PRIORITY = st.sampled_from((None, None, "low", "high"))
BODY = st.sampled_from((0, 0, 1, 2))
FIELD = st.sampled_from(("title", "description", "priority", "status"))


class ColleagueRules:
    """Rules of `model_machine.Model` for the colleague (a mixin: Hypothesis collects rules
    from the whole class). The methods below are the machine's, named here for the reader."""

    world: World | None

    @property
    def w(self) -> World:
        raise NotImplementedError

    def note(self, step: str, /, **args: Any) -> None:
        raise NotImplementedError

    def fresh(self, client: str, name: str) -> str:
        raise NotImplementedError

    def _value(self, client: str, name: str, shown: Any, choice: int) -> Any:
        raise NotImplementedError

    def _colleague_pick(self, pick: int) -> str | None:
        issues = self.w.oracle.mirror.issues
        ids = sorted(issues, key=lambda key: int(issues[key].get("number") or 0))
        return ids[pick % len(ids)] if ids else None

    @rule(title=TITLE, priority=CREATE_PRIORITY)
    def colleague_create(self, title: int, priority: str | None) -> None:
        self.note("colleague_create", title=title, priority=priority)
        fields: dict[str, Any] = {
            "title": TITLES[title] if title < len(TITLES) else self.fresh(COLLEAGUE, "new")
        }
        if priority is not None:
            fields["priority"] = priority
        self.w.run(self.w.colleague_call("POST", "/issues", json=fields))

    @rule(pick=PICK, name=FIELD, choice=st.integers(0, 9))
    def colleague_edit(self, pick: int, name: str, choice: int) -> None:
        self.note("colleague_edit", pick=pick, name=name, choice=choice)
        key = self._colleague_pick(pick)
        if key is None:
            return
        shown = self.w.oracle.mirror.issues[key].get(name)
        value = self._value(COLLEAGUE, name, shown, min(choice, 7))
        self.w.run(self.w.colleague_call("PATCH", f"/issues/{key}", json={name: value}))

    @precondition(lambda self: self.world is not None and len(self.w.oracle.mirror.issues) > 3)
    @rule(pick=PICK)
    def colleague_delete(self, pick: int) -> None:
        self.note("colleague_delete", pick=pick)
        key = self._colleague_pick(pick)
        if key is not None:
            self.w.run(self.w.colleague_call("DELETE", f"/issues/{key}"))

    @rule(pick=PICK, body=BODY)
    def colleague_comment(self, pick: int, body: int) -> None:
        self.note("colleague_comment", pick=pick, body=body)
        key = self._colleague_pick(pick)
        if key is None:
            return
        text = BODIES[body] if body < len(BODIES) else self.fresh(COLLEAGUE, "comment")
        self.w.run(self.w.colleague_call("POST", "/comments", json={"issue_id": key, "body": text}))
