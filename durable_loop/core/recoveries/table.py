"""The README's recoveries table, generated from the registry (tests/docs checks that the
README holds exactly this, so the docs cannot drift from the code)."""

from __future__ import annotations

from durable_loop.core.recoveries.registry import REGISTRY

START = "<!-- recoveries-table: generated from core/recoveries/table.py -->"
END = "<!-- recoveries-table: end -->"


def _settings(name: str) -> str:
    fields = REGISTRY[name].settings.model_fields
    return ", ".join(f"`{field}`" for field in fields) or "none"


def markdown_table() -> str:
    rows = [
        "| recovery | stage | default | settings | what it fixes | measured effect |",
        "|---|---|---|---|---|---|",
    ]
    for name, r in REGISTRY.items():
        default = "on" if r.on_by_default else "off"
        patch = f" (patch `{r.patch_id}`)" if r.patch_id else ""
        rows.append(
            f"| `{name}` | {r.stage} | {default} | {_settings(name)} | {r.fixes}{patch} "
            f"| {r.effect} |"
        )
    return "\n".join(rows)


def readme_block() -> str:
    return f"{START}\n{markdown_table()}\n{END}"


if __name__ == "__main__":
    print(readme_block())
