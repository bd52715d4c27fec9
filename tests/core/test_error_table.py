"""The error tables in docs/architecture.md list exactly the codes of the enums, family by
family: the runtime's ``ErrorCode`` (its families in ``FAMILIES``) and the codes the CLI,
evals and chaos runs keep in their own layers (``CliCode``, ``EvalCode``, ``ChaosCode``)."""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import Path

from durable_loop.chaos.codes import ChaosCode
from durable_loop.cli.codes import CliCode
from durable_loop.core.errors import FAMILIES, Code, ErrorCode
from durable_loop.evals.codes import EvalCode

ARCHITECTURE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
ROW = re.compile(r"^\| `([A-Z][A-Z0-9_]*)` \| (.+) \|$")
HEADING = re.compile(r"^### (.+)$")
LAYER_FAMILIES: dict[str, type[Code]] = {
    "Command line": CliCode,
    "Evals": EvalCode,
    "Chaos": ChaosCode,
}
ENUMS: tuple[type[Code], ...] = (ErrorCode, *LAYER_FAMILIES.values())


def all_families() -> dict[str, list[str]]:
    """Family heading -> code values, in the order the tables must follow."""
    families = {name: [code.value for code in codes] for name, codes in FAMILIES.items()}
    families.update({name: [code.value for code in enum] for name, enum in LAYER_FAMILIES.items()})
    return families


def table_rows() -> list[tuple[str, str, str]]:
    """(family, code, meaning) of every row of the tables under the ``## Errors`` heading;
    the family is the ``###`` heading above the row ("" before the first one)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    rows: list[tuple[str, str, str]] = []
    family = ""
    for line in section.splitlines():
        if heading := HEADING.match(line.strip()):
            family = heading.group(1)
        elif row := ROW.match(line.strip()):
            rows.append((family, row.group(1), row.group(2)))
    return rows


def test_the_tables_list_every_code_once_with_a_meaning():
    rows = table_rows()
    codes = [code for _, code, _ in rows]
    assert len(codes) == len(set(codes)), sorted({c for c in codes if codes.count(c) > 1})
    assert set(codes) == {code.value for enum in ENUMS for code in enum}
    assert all(meaning.strip() for _, _, meaning in rows)


def test_each_family_has_its_own_table_in_declaration_order():
    documented: dict[str, list[str]] = {}
    for family, code, _ in table_rows():
        documented.setdefault(family, []).append(code)
    assert documented == all_families()
    assert list(documented) == list(all_families())


def test_every_runtime_code_is_in_exactly_one_family():
    grouped = [code for codes in FAMILIES.values() for code in codes]
    assert sorted(grouped) == sorted(ErrorCode)
    assert grouped == list(ErrorCode), "FAMILIES follows the enum's declaration order"


def test_no_value_is_in_two_enums_and_values_equal_names():
    values = [code.value for enum in ENUMS for code in enum]
    assert len(values) == len(set(values)), sorted({v for v in values if values.count(v) > 1})
    assert all(code.value == code.name for enum in ENUMS for code in enum)
    assert all(issubclass(enum, StrEnum) for enum in ENUMS)


def test_known_reads_only_its_own_enum():
    assert ErrorCode.known("TOOL_ERROR") is ErrorCode.TOOL_ERROR
    assert ErrorCode.known("NOT_PENDING") is None
    assert CliCode.known("NOT_PENDING") is CliCode.NOT_PENDING
    assert EvalCode.known(None) is None
