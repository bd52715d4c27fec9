"""``/docs`` (Swagger UI) and ``/redoc`` served from packaged assets, so they render offline.

FastAPI's own pages load their scripts from a public CDN and stay blank without a
network. The ``fastapi-offline`` package ships the same Swagger UI (5.x, which reads
OpenAPI 3.1) and ReDoc bundles; they are mounted under ``/docs/assets`` and the pages point
there. ``/openapi.json`` is the schema itself.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs/assets"


def assets_dir() -> Path:
    """The Swagger UI and ReDoc bundles of the ``fastapi-offline`` package."""
    return Path(str(files("fastapi_offline") / "static"))


def install_api_docs(app: FastAPI) -> None:
    """Add ``/docs`` and ``/redoc`` on local assets; create ``app`` with ``docs_url=None``
    and ``redoc_url=None`` so FastAPI's CDN pages are not registered."""
    app.mount(ASSETS, StaticFiles(directory=assets_dir()), name="api-docs-assets")
    openapi_url = app.openapi_url or "/openapi.json"

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{openapi_url}",
            title=f"{app.title} · API",
            swagger_js_url=f"{root}{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS}/favicon.png",
            swagger_ui_parameters=app.swagger_ui_parameters,
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_redoc_html(
            openapi_url=f"{root}{openapi_url}",
            title=f"{app.title} · API",
            redoc_js_url=f"{root}{ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS}/favicon.png",
            with_google_fonts=False,
        )
