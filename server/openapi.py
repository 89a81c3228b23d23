"""The OpenAPI document, adjusted to say what the service really does.

FastAPI documents a 422 for every endpoint with parameters; this service answers 400 in the
error envelope instead (declared per route), so the 422s and their schemas are removed. The
document also declares the bearer-key security that `server.auth` enforces and the
`Idempotency-Key` header that `server.idempotency` honours on every POST.
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
