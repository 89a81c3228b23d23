"""The colleague of the model: a user of the same workspace writing straight to the service
(no cache, no faults), on the records as the service holds them: identical issues and
comments, edits of the same fields the clients edit, deletes.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule
from model_checks import outbox_rows
from model_world import COLLEAGUE, World

from cache.outbox import is_local

PICK = st.integers(0, 50)
TITLES = ("Weekly review", "Standup notes")
"""Templated titles: creates with them are identical unless their priority differs."""
BODIES = ("+1", "LGTM")
TITLE = st.sampled_from((0, 0, 1, 2))
"""A create's title: mostly templated (so creates are often identical), else a new one."""
CREATE_PRIORITY = st.sampled_from((None, None, "low", "high"))
BODY = st.sampled_from((0, 0, 1, 2))
FIELDS = ("title", "description", "priority", "status")
FIELD = st.sampled_from(FIELDS)


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

    @precondition(lambda self: self.world is not None and bool(self._waiting_edits()))
    @rule(pick=PICK, choice=st.integers(0, 9))
    def colleague_clash(self, pick: int, choice: int) -> None:
        """The colleague edits a field a client has an edit of waiting: a conflict in the
        making. Left to `colleague_edit`, the two met so rarely that 186 examples of the long
        run opened no conflict at all."""
        self.note("colleague_clash", pick=pick, choice=choice)
        waiting = self._waiting_edits()
        key, name = waiting[pick % len(waiting)]
        shown = self.w.oracle.mirror.issues[key].get(name)
        value = self._value(COLLEAGUE, name, shown, min(choice, 7))
        self.w.run(self.w.colleague_call("PATCH", f"/issues/{key}", json={name: value}))

    def _waiting_edits(self) -> list[tuple[str, str]]:
        """(issue, field) of every client's pending edit of an issue on the service."""
        issues = self.w.oracle.mirror.issues
        found = []
        for client in self.w.clients:
            for row in outbox_rows(client):
                target = row["target"]
                if row["operation"] != "update" or row["state"] != "pending":
                    continue
                if is_local(target) or target not in issues or row["resource"] != "issues":
                    continue
                found += [(target, name) for name in row["changes"] if name in FIELDS]
        return list(dict.fromkeys(found))

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
