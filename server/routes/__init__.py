"""The endpoints, one module per resource, gathered into the `/v1` router."""

from __future__ import annotations

from fastapi import APIRouter

from server.routes import (
    api_keys,
    bulk,
    comments,
    issues,
    me,
    projects,
    search,
    users,
    webhooks,
    workspaces,
)

router = APIRouter()
for module in (me, workspaces, users, bulk, issues, projects, comments, search, webhooks, api_keys):
    router.include_router(module.router)
