"""docs/providers.md says which transforms ``provider_normalization`` applies per provider,
and that is what the code applies (the Gemini signature shim included)."""

from __future__ import annotations

import re
from pathlib import Path

from durable_loop.core.providers import ADAPTERS
from durable_loop.core.transforms.defaults import provider_normalization
from durable_loop.core.transforms.names import VALID_NAMES

DOC = Path(__file__).parents[3] / "docs" / "providers.md"
ALL_NAMES = {name for names in VALID_NAMES.values() for name in names}


def documented() -> dict[str, set[str]]:
    text = DOC.read_text()
    section = text.split("| provider | applied by `transforms.provider_normalization` |", 1)[1]
    table = section.split("\n\n", 1)[0]
    rows: dict[str, set[str]] = {}
    for line in table.splitlines()[2:]:
        providers, applied = line.strip("|").split("|", 1)
        names = set(re.findall(r"`([a-z_]+)`", applied)) & ALL_NAMES
        for provider in re.findall(r"`([a-z]+)`", providers):
            rows[provider] = names
    return rows


def test_the_providers_doc_lists_what_normalisation_applies():
    rows = documented()
    assert set(rows) == set(ADAPTERS)
    for provider, names in rows.items():
        assert names == set(provider_normalization(provider).all_names()), provider
