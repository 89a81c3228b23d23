"""The OpenAPI document describes what the service really does; schemathesis checks it.

Schemathesis generates requests from the published document (valid by the document) and checks
that no answer is a 5xx and that every answer (status, content type, body, declared headers)
matches the document. It drives the real application through its ASGI client.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.specs.openapi import checks as openapi_checks
from server_support import bearer

from server.app import create_app
from server.keys import create_key


async def test_the_document_is_public_and_complete(
    open_client: Any,
) -> None:
    async with open_client(None) as anonymous:
        response = await anonymous.get("/openapi.json")
    assert response.status_code == 200
    document = response.json()
    assert document["components"]["securitySchemes"]["apiKey"]["scheme"] == "bearer"
    assert document["security"] == [{"apiKey": []}]
    operations = {
        (method.upper(), path) for path, item in document["paths"].items() for method in item
    }
    assert operations == {
        ("GET", "/v1/me"),
        ("GET", "/v1/users"),
        ("GET", "/v1/workspaces"),
        ("GET", "/v1/workspaces/{workspace_id}"),
        ("PATCH", "/v1/workspaces/{workspace_id}"),
        ("GET", "/v1/issues"),
        ("POST", "/v1/issues"),
        ("POST", "/v1/issues/bulk"),
        ("GET", "/v1/issues/{issue_id}"),
        ("PATCH", "/v1/issues/{issue_id}"),
        ("DELETE", "/v1/issues/{issue_id}"),
        ("GET", "/v1/projects"),
        ("POST", "/v1/projects"),
        ("GET", "/v1/projects/{project_id}"),
        ("PATCH", "/v1/projects/{project_id}"),
        ("DELETE", "/v1/projects/{project_id}"),
        ("GET", "/v1/comments"),
        ("POST", "/v1/comments"),
        ("GET", "/v1/comments/{comment_id}"),
        ("PATCH", "/v1/comments/{comment_id}"),
        ("DELETE", "/v1/comments/{comment_id}"),
        ("GET", "/v1/search"),
        ("GET", "/v1/webhooks"),
        ("POST", "/v1/webhooks"),
        ("GET", "/v1/webhooks/{webhook_id}"),
        ("PATCH", "/v1/webhooks/{webhook_id}"),
        ("DELETE", "/v1/webhooks/{webhook_id}"),
        ("GET", "/v1/webhooks/{webhook_id}/deliveries"),
        ("GET", "/v1/api-keys"),
        ("POST", "/v1/api-keys"),
        ("DELETE", "/v1/api-keys/{key_id}"),
    }
    for path, item in document["paths"].items():
        for method, operation in item.items():
            responses = operation["responses"]
            assert "422" not in responses, (method, path)
            assert {"401", "429", "500"} <= set(responses), (method, path)
            for status, response in responses.items():
                limited = "X-RateLimit-Remaining" in response.get("headers", {})
                assert limited == (status != "401"), (method, path, status)
            assert "Retry-After" in responses["429"]["headers"]
            if method == "post":
                assert any(p["name"] == "Idempotency-Key" for p in operation["parameters"])
    schemas = document["components"]["schemas"]
    assert "HTTPValidationError" not in schemas
    assert schemas["IssueCreate"]["additionalProperties"] is False
    assert schemas["IssueCreate"]["required"] == ["title"]
    assert "null" not in str(schemas["IssueUpdate"]["properties"]["title"])


CHECKS = [
    schemathesis.checks.not_a_server_error,
    openapi_checks.status_code_conformance,
    openapi_checks.content_type_conformance,
    openapi_checks.response_headers_conformance,
    openapi_checks.response_schema_conformance,
]


LOOPBACK_HOOK = "http://127.0.0.1:9/hook"
"""The discard port: nothing listens, and the dispatcher is not even started here."""


class MinutePerReading:
    """A clock that moves one minute each time it is read, so every request falls in a fresh
    rate-limit minute: the fuzzer meets no limit (429s are checked in test_limits_http)."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 21, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


class RealRecords:
    """Puts real records behind generated requests, so that operations on `{issue_id}` and
    friends reach their success paths instead of always answering 404."""

    def __init__(self, schema: Any, key: str) -> None:
        self.schema = schema
        self.headers = bearer(key)
        self.created = 0
        self.generated = 0
        me = self._call("/v1/me", "GET")
        self.workspace_id: str = me["workspace"]["id"]
        self.user_id: str = me["user"]["id"]

    def _call(self, path: str, method: str, body: Any = None) -> Any:
        case = (
            self.schema[path][method].Case(body=body) if body else self.schema[path][method].Case()
        )
        response = case.call(headers=self.headers)
        assert response.status_code in {200, 201}, response.text
        return response.json()

    def issue(self) -> str:
        return str(self._call("/v1/issues", "POST", {"title": "Real issue"})["id"])

    def project(self) -> str:
        self.created += 1
        key = "".join(chr(ord("A") + int(digit)) for digit in f"{self.created:04d}")
        return str(self._call("/v1/projects", "POST", {"key": key, "name": "Real"})["id"])

    def comment(self) -> str:
        body = {"issue_id": self.issue(), "body": "Real comment"}
        return str(self._call("/v1/comments", "POST", body)["id"])

    def webhook(self) -> str:
        body = {"url": LOOPBACK_HOOK, "events": ["*"]}
        return str(self._call("/v1/webhooks", "POST", body)["id"])

    def api_key(self) -> str:
        return str(self._call("/v1/api-keys", "POST", {"name": "Spare"})["id"])

    def substitute(self, case: schemathesis.Case) -> None:
        """Point about half of the generated ids at records that exist, and webhook URLs at a
        loopback address (any other is refused by the URL policy)."""
        makers = {
            "issue_id": self.issue,
            "project_id": self.project,
            "comment_id": self.comment,
            "workspace_id": lambda: self.workspace_id,
            "webhook_id": self.webhook,
            "key_id": self.api_key,
        }
        self.generated += 1
        for name in case.path_parameters or {}:
            if self.generated % 2 == 0:
                case.path_parameters[name] = makers[name]()
        if isinstance(case.body, dict):
            for name in ("assignee", "lead"):
                if name in case.body:
                    case.body[name] = self.user_id
            if "issue_id" in case.body:
                case.body["issue_id"] = self.issue()
            if case.body.get("project_id") is not None:
                case.body["project_id"] = self.project()
            if "url" in case.body:
                case.body["url"] = LOOPBACK_HOOK


def test_every_operation_conforms_to_the_document(tmp_path: Path) -> None:
    db_path = tmp_path / "schemathesis.db"
    clock = MinutePerReading()
    key = create_key(db_path, "Fuzz", "schemathesis", plan="enterprise", clock=clock)
    schema = schemathesis.openapi.from_asgi("/v1/openapi.json", create_app(db_path, clock=clock))
    records = RealRecords(schema, key)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 31
    statuses: set[tuple[str, int]] = set()
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=12,
            deadline=None,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        def conforms(case: schemathesis.Case) -> None:
            records.substitute(case)
            response = case.call_and_validate(headers=records.headers, checks=CHECKS)
            statuses.add((case.operation.label, response.status_code))

        conforms()
    succeeded = {label for label, status in statuses if status in {200, 201}}
    assert len(succeeded) == len(operations), sorted(statuses)
