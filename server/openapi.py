"""The OpenAPI document, adjusted to say what the service really does.

FastAPI documents a 422 for every endpoint with parameters; this service answers 400 in the
error envelope instead (declared per route), so the 422s and their schemas are removed. The
document also declares the bearer-key security that `server.auth` enforces, the
`Idempotency-Key` header that `server.idempotency` honours on every POST, and what the rate
limiter adds everywhere: the `X-RateLimit-*` headers on every answer to a known key (all but
401) and the 429 answer with `Retry-After`.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

_IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "Replays the first successful answer to a retry with the same key and body "
    "for 24 hours; the same key with another body is 400 `idempotency_key_reused`.",
    "schema": {"type": "string", "minLength": 1, "maxLength": 255},
}


def _integer_header(description: str) -> dict[str, Any]:
    return {"description": description, "required": True, "schema": {"type": "integer"}}


_RATE_LIMIT_HEADERS = {
    "X-RateLimit-Limit": _integer_header("Requests allowed in the most constrained window."),
    "X-RateLimit-Remaining": _integer_header("Requests left in that window."),
    "X-RateLimit-Reset": _integer_header("Unix time (seconds) when that window ends."),
}
_TOO_MANY_REQUESTS = {
    "description": "A rate limit is exceeded (`rate_limit_exceeded`); `retry_after` seconds "
    "to wait, also in `Retry-After`.",
    "headers": {
        **_RATE_LIMIT_HEADERS,
        "Retry-After": _integer_header("Seconds until the exceeded window ends (at least 1)."),
    },
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}},
}


def _declare_rate_limits(responses: dict[str, Any]) -> None:
    """Every answer but a 401 (the key is unknown then) carries the rate-limit headers."""
    responses["429"] = _TOO_MANY_REQUESTS
    for status, response in responses.items():
        if status != "401":
            response["headers"] = {**response.get("headers", {}), **_RATE_LIMIT_HEADERS}


class TrackerAPI(FastAPI):
    def openapi(self) -> dict[str, Any]:
        if self.openapi_schema is None:
            self.openapi_schema = self._document()
        return self.openapi_schema

    def _document(self) -> dict[str, Any]:
        document = get_openapi(
            title=self.title,
            version=self.version,
            openapi_version=self.openapi_version,
            description=self.description,
            routes=self.routes,
        )
        for path_item in document["paths"].values():
            for method, operation in path_item.items():
                operation["responses"].pop("422", None)
                _declare_rate_limits(operation["responses"])
                if method == "post":
                    operation.setdefault("parameters", []).append(_IDEMPOTENCY_KEY)
        schemas = document.get("components", {}).get("schemas", {})
        schemas.pop("HTTPValidationError", None)
        schemas.pop("ValidationError", None)
        document.setdefault("components", {})["securitySchemes"] = {
            "apiKey": {
                "type": "http",
                "scheme": "bearer",
                "description": "An API key: `trk_` and 40 url-safe characters.",
            }
        }
        document["security"] = [{"apiKey": []}]
        return document
