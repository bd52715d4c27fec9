"""``/docs`` and ``/redoc`` render from packaged assets: nothing is loaded from another
host, so they work offline like the rest of the service."""

from __future__ import annotations

import re

import pytest

from durable_loop.service.api_docs import ASSETS, assets_dir

LOADED = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']|url:\s*["']([^"']+)["']""")


def loaded_urls(html: str) -> list[str]:
    return [a or b for a, b in LOADED.findall(html)]


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
async def test_the_api_docs_load_nothing_from_another_host(loop_worker, service, page: str):
    async with loop_worker() as w, service(w) as http:
        html = await http.get(page)
        urls = loaded_urls(html.text)
        assets = {url: await http.get(url) for url in urls if url.startswith(ASSETS)}
        schema = await http.get("/openapi.json")
    assert html.status_code == 200 and "/openapi.json" in html.text
    assert urls and all(url.startswith("/") for url in urls), urls
    assert "//" not in "".join(urls) and "googleapis" not in html.text
    script = next(url for url in urls if url.endswith(".js"))
    assert assets[script].status_code == 200 and len(assets[script].content) > 100_000
    assert all(response.status_code == 200 for response in assets.values())
    assert schema.json()["openapi"].startswith("3.1")


def test_the_packaged_swagger_ui_reads_openapi_3_1():
    """FastAPI writes OpenAPI 3.1, which Swagger UI reads from version 5 on (4.x, as some
    packages ship it, shows "Unable to render this definition")."""
    bundle = (assets_dir() / "swagger-ui-bundle.js").read_text(errors="replace")
    assert "SwaggerUIBundle" in bundle and "isOAS31" in bundle
