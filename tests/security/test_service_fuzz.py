"""Schemathesis, harder than the quick conformance run (tests/server/test_openapi.py): more
examples per operation, and half of them negative (each one breaks the document on purpose: a
wrong type, a missing member, an out-of-range value, an odd header). Whatever arrives, the
service answers without a 5xx, refuses what the document forbids with a 4xx in the error
envelope, and never shows a stack trace.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.specs.openapi import checks as openapi_checks
from security_support import HOOK_EVENTS, HOOK_URL

from server.app import create_app
from server.keys import create_key

EXAMPLES = 20
"""Per operation; the quick run makes 12, all positive."""

CHECKS = [schemathesis.checks.not_a_server_error, openapi_checks.content_type_conformance]
"""Not `negative_data_rejection`: unknown query parameters are ignored, as is usual (the service
refuses unknown members of bodies only: docs/service.md#requests), and schemathesis counts them as
invalid data."""


class MinutePerReading:
    """Every reading of the clock is a fresh rate-limit minute, so no request meets a limit."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 21, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


class Records:
    """Real records behind a third of the generated ids, so operations on `{issue_id}` and the
    like reach past their 404 into validation and storage."""

    def __init__(self, schema: Any, headers: dict[str, str]) -> None:
        self.schema = schema
        self.headers = headers
        self.count = 0
        self.workspace_id = str(self._made("/v1/me", "GET")["workspace"]["id"])

    def _made(self, path: str, method: str, body: Any = None) -> Any:
        operation = self.schema[path][method]
        case = operation.Case(body=body) if body is not None else operation.Case()
        response = case.call(headers=self.headers)
        assert response.status_code in {200, 201}, response.text
        return response.json()

    def _post(self, path: str, body: dict[str, Any]) -> str:
        return str(self._made(path, "POST", body)["id"])

    def issue(self) -> str:
        return self._post("/v1/issues", {"title": "Fuzzed"})

    def ids(self) -> dict[str, Any]:
        self.count += 1
        key = "".join(chr(ord("A") + int(digit)) for digit in f"{self.count:04d}")
        return {
            "issue_id": self.issue,
            "project_id": lambda: self._post("/v1/projects", {"name": "Fuzz", "key": key}),
            "comment_id": lambda: self._post(
                "/v1/comments", {"issue_id": self.issue(), "body": "Fuzzed"}
            ),
            "workspace_id": lambda: self.workspace_id,
            "webhook_id": lambda: self._post(
                "/v1/webhooks", {"url": HOOK_URL, "events": HOOK_EVENTS}
            ),
            "key_id": lambda: self._post("/v1/api-keys", {"name": "Spare"}),
        }

    def substitute(self, case: schemathesis.Case) -> None:
        self.count += 1
        makers = self.ids()
        if self.count % 3 == 0:
            for name in case.path_parameters or {}:
                if isinstance(case.path_parameters[name], str):
                    case.path_parameters[name] = makers[name]()
        if isinstance(case.body, dict) and isinstance(case.body.get("url"), str):
            case.body["url"] = HOOK_URL


def assert_refused_in_the_envelope(response: Any) -> None:
    assert "Traceback" not in response.text
    if response.status_code >= 400:
        body = response.json()
        assert set(body) == {"error"}, body
        assert isinstance(body["error"]["code"], str) and body["error"]["message"]


def test_no_generated_request_breaks_the_service(tmp_path: Path) -> None:
    db_path = tmp_path / "fuzz.db"
    clock = MinutePerReading()
    key = create_key(db_path, "Fuzz", "fuzz", plan="enterprise", clock=clock)
    app = create_app(db_path, clock=clock)
    schema = schemathesis.openapi.from_asgi("/v1/openapi.json", app)
    records = Records(schema, {"Authorization": f"Bearer {key}"})
    operations = [result.ok() for result in schema.get_all_operations()]
    seen: dict[GenerationMode, set[int]] = {mode: set() for mode in GenerationMode}
    for operation in operations:
        strategy = st.one_of(
            operation.as_strategy(generation_mode=GenerationMode.POSITIVE),
            operation.as_strategy(generation_mode=GenerationMode.NEGATIVE),
        )

        @given(case=strategy)
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        def survives(case: schemathesis.Case) -> None:
            records.substitute(case)
            response = case.call_and_validate(headers=records.headers, checks=CHECKS)
            assert_refused_in_the_envelope(response)
            seen[case.meta.generation.mode].add(response.status_code)

        survives()
    assert len(operations) == 31
    assert seen[GenerationMode.NEGATIVE] and max(seen[GenerationMode.NEGATIVE]) < 500
    assert {200, 201} <= seen[GenerationMode.POSITIVE], seen
