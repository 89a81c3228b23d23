"""Every error the application can produce, answered in the published error body.

FastAPI's own failures (validation, unknown routes, wrong methods, unparseable bodies) are
translated to the service's codes here (docs/api.md#error-codes), and anything unexpected becomes a
500 `internal_error` whose body says nothing about the cause (the traceback goes to the server log
only).
"""

from __future__ import annotations

import http

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from server.errors import ServiceError
from server.validation import invalid_request


def _code(status: int) -> str:
    """The service's code for a framework error: `invalid_request` for 400, otherwise the
    status phrase (`not_found`, `method_not_allowed`)."""
    if status == 400:
        return "invalid_request"
    return http.HTTPStatus(status).phrase.lower().replace(" ", "_")


def error_response(error: ServiceError) -> JSONResponse:
    return JSONResponse(error.envelope(), status_code=error.status, headers=error.headers)


async def _service_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ServiceError)
    return error_response(exc)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    """Starlette's and FastAPI's own HTTP errors: no route (404), wrong method (405), ..."""
    assert isinstance(exc, HTTPException)
    status = exc.status_code
    if status == 404:
        message = f"No such endpoint: {request.method} {request.url.path}."
    elif status == 405:
        message = f"{request.method} is not allowed on {request.url.path}."
    else:
        message = f"{exc.detail}." if exc.detail else http.HTTPStatus(status).phrase
    error = {"code": _code(status), "message": message}
    return JSONResponse({"error": error}, status_code=status, headers=exc.headers)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return error_response(invalid_request(exc.errors()))


def internal_error_response() -> JSONResponse:
    """The 500 answer: it says nothing about the cause (the traceback goes to the log only)."""
    error = {"code": "internal_error", "message": "Internal server error."}
    return JSONResponse({"error": error}, status_code=500)


async def _internal_error(request: Request, exc: Exception) -> JSONResponse:
    return internal_error_response()


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(ServiceError, _service_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(Exception, _internal_error)
