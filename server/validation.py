"""Pydantic's error lists turned into the service's 400 `invalid_request`
(docs/service.md#requests).

Used by the handler for FastAPI's request validation errors and by bulk operations, which
validate each operation themselves, so both speak the same way: `details` lists every problem as
`{field, message}`, the message names the first one. Text that echoes client input is escaped so
that an error about a lone surrogate can still be encoded as UTF-8.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from server.errors import FieldError, InvalidRequest

_LOCATION_ROOTS = frozenset({"body", "query", "path", "header", "cookie"})
_NOT_AN_OBJECT = frozenset({"model_attributes_type", "model_type", "dict_type"})


def _printable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _field(error: Mapping[str, Any]) -> str:
    if error["type"] == "json_invalid":
        return "body"
    parts = list(error["loc"])
    if len(parts) > 1 and parts[0] in _LOCATION_ROOTS:
        parts = parts[1:]
    return _printable(".".join(str(part) for part in parts)) or "body"


def _summary(error: Mapping[str, Any], field: str) -> str:
    kind = error["type"]
    whole_body = tuple(error["loc"]) == ("body",)
    if kind == "json_invalid":
        return "The request body is not valid JSON."
    if whole_body and kind == "missing":
        return "A JSON request body is required."
    if whole_body and kind in _NOT_AN_OBJECT:
        return "The request body must be a JSON object (send Content-Type: application/json)."
    if kind == "missing":
        return f"The `{field}` field is required."
    if kind == "extra_forbidden":
        return f"Unknown member `{field}`."
    return f"Invalid `{field}`: {_printable(str(error['msg']))}."


def _detail(error: Mapping[str, Any], field: str) -> FieldError:
    if error["type"] == "extra_forbidden":
        return {"field": field, "message": "unknown member"}
    if error["type"] == "json_invalid":
        return {"field": field, "message": "not valid JSON"}
    return {"field": field, "message": _printable(str(error["msg"]))}


def invalid_request(errors: Iterable[Mapping[str, Any]]) -> InvalidRequest:
    """One error for a non-empty list of pydantic errors."""
    listed = list(errors)
    fields = [_field(error) for error in listed]
    details = [_detail(error, field) for error, field in zip(listed, fields, strict=True)]
    return InvalidRequest(_summary(listed[0], fields[0]), details=details)
