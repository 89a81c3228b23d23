"""The endpoints, one module per resource, gathered into the `/v1` router."""

from __future__ import annotations

from fastapi import APIRouter

from server.routes import bulk, comments, issues, me, projects, search, users, workspaces

router = APIRouter()
for module in (me, workspaces, users, bulk, issues, projects, comments, search):
    router.include_router(module.router)
