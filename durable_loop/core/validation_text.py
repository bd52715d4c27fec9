"""One line naming every field a validation refused (pydantic's error list), for the
HTTP API's 422 and the CLI's INVALID_SETTING: a person fixes them all in one go."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def fields_text(
    errors: Iterable[Mapping[str, Any]], *, skip: tuple[str, ...] = (), root: str = "body"
) -> str:
    """``path: message`` for each error, joined by ``; ``. ``skip`` drops location parts
    that name no field (FastAPI's ``body``); ``root`` names an error of the whole value."""
    parts = []
    for error in errors:
        where = ".".join(str(p) for p in error.get("loc", ()) if p not in skip) or root
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return "; ".join(parts)
