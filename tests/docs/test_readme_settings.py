"""The README's settings table names every ``RuntimeConfig`` field and every field of its
groups, so a new setting cannot land without a row that says what it decides."""

from __future__ import annotations

from pydantic import BaseModel

from durable_loop.core.config import RuntimeConfig
from tests.docs.blocks import REPO

START = "## Runtime configuration (`RuntimeConfig`)"
END = "### Recoveries"
GROUPS_LISTED_BY_NAME = {"recoveries", "router"}
"""Groups whose own fields are described elsewhere: recoveries in the generated table below
the section, the router pipeline's in ``RouterConfig``'s field descriptions."""


def settings_section() -> str:
    text = (REPO / "README.md").read_text()
    return text[text.index(START) : text.index(END)]


def group_fields(name: str) -> list[str]:
    annotation = RuntimeConfig.model_fields[name].annotation
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return list(annotation.model_fields)
    return []


def test_every_runtime_setting_has_its_row():
    section = settings_section()
    missing = [name for name in RuntimeConfig.model_fields if f"`{name}`" not in section]
    assert missing == [], f"settings with no row in the README table: {missing}"


def test_every_field_of_a_group_is_named():
    section = settings_section()
    missing = [
        f"{group}.{field}"
        for group in RuntimeConfig.model_fields
        if group not in GROUPS_LISTED_BY_NAME
        for field in group_fields(group)
        if f"`{field}`" not in section
    ]
    assert missing == [], f"group fields the README table does not name: {missing}"
