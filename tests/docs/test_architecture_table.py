"""The package table in docs/architecture.md names every module of ``durable_loop/``, and only
modules that exist, so the map cannot drift from the code.

The table is the one headed ``| package | what is where | rule |``. Its first cell names one
package (``core/``, ``client/``; ``durable_loop/`` for the top level); rows marked
``(repo root)`` are about the repository, not the package, and are skipped. In the second
cell every backticked name ending in ``.py`` is a module and every one ending in ``/`` a
subpackage, both relative to the row's package; a subpackage followed by parentheses makes
the names inside them relative to it (``trace/`` (``decode.py``, ...)). ``workspace*.py``
is a glob. A backticked path that exists from the repository root (``bench/cli_latency.py``)
is a reference to something outside the package and is ignored. A package's ``__init__.py``
is covered by naming the package.

Reads files only: no import of the package, no server (not marked ``docs``, so it runs in
every ``make test`` stage).
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ARCHITECTURE = REPO / "docs" / "architecture.md"
PACKAGE = REPO / "durable_loop"
HEADER = "| package | what is where | rule |"
NAME = re.compile(r"^[A-Za-z0-9_*]+(?:/[A-Za-z0-9_*]+)*(?:\.py|/)$")
ROOT_ROW = "durable_loop/"


def table_lines(text: str) -> list[str]:
    """The body rows of the package table (the lines after its header and separator)."""
    lines = text.splitlines()
    start = lines.index(HEADER)
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def cells(row: str) -> list[str]:
    """The cells of one table row, split on ``|`` outside backticks."""
    out: list[str] = []
    current: list[str] = []
    in_code = False
    for ch in row.strip().strip("|"):
        if ch == "`":
            in_code = not in_code
        if ch == "|" and not in_code:
            out.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    out.append("".join(current).strip())
    return out


def names_in(cell: str) -> list[str]:
    """Module and subpackage names of one cell, each made relative to the row's package.

    A subpackage name directly followed by ``(`` opens a context: names up to the matching
    ``)`` are relative to it (nested to any depth).
    """
    names: list[str] = []
    contexts: list[tuple[int, str]] = []  # (paren depth the context lives at, prefix)
    depth, pending, i = 0, None, 0
    while i < len(cell):
        ch = cell[i]
        if ch == "`":
            end = cell.index("`", i + 1)
            token = cell[i + 1 : end]
            i = end + 1
            prefix = contexts[-1][1] if contexts else ""
            if NAME.match(token):
                names.append(prefix + token)
                pending = prefix + token if token.endswith("/") else None
            else:
                pending = None
            continue
        if ch == "(":
            depth += 1
            if pending is not None:
                contexts.append((depth, pending))
            pending = None
        elif ch == ")":
            if contexts and contexts[-1][0] == depth:
                contexts.pop()
            depth -= 1
            pending = None
        elif not ch.isspace():
            pending = None
        i += 1
    return names


def table() -> dict[str, list[str]]:
    """package (``core/``; ``""`` for the top level) -> the names its row gives, relative to
    ``durable_loop/``."""
    rows: dict[str, list[str]] = {}
    for line in table_lines(ARCHITECTURE.read_text(encoding="utf-8")):
        first, what = cells(line)[:2]
        if "(repo root)" in first:
            continue
        packages = re.findall(r"`([^`]+/)`", first)
        assert len(packages) == 1, f"a row names one package: {first!r}"
        package = "" if packages[0] == ROOT_ROW else packages[0]
        assert package not in rows, f"{packages[0]} has two rows"
        rows[package] = [package + name for name in ["", *names_in(what)]]
    return rows


def is_outside_reference(name: str, package: str) -> bool:
    """A path given from the repository root, e.g. ``bench/cli_latency.py``."""
    relative = name[len(package) :]
    return "/" in relative.rstrip("/") and (REPO / relative).exists()


def modules() -> set[str]:
    return {
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*.py")
        if "__pycache__" not in p.parts
    }


def matches(name: str) -> set[str]:
    """The modules one table name stands for (a package stands for its ``__init__.py``)."""
    if name == "" or name.endswith("/"):
        init = f"{name}__init__.py"
        return {init} if (PACKAGE / init).exists() else set()
    return {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.glob(name)}


def test_the_table_parses_subpackage_contexts():
    cell = (
        "`a.py` (one, `b/c.py`), `trace/` (`decode.py`: x; `builder.py`, `children.py`"
        " (sub-agent calls), `sub/` (`deep.py`)), `codec/` (payload encryption), `z.py`"
    )
    assert names_in(cell) == [
        "a.py",
        "b/c.py",
        "trace/",
        "trace/decode.py",
        "trace/builder.py",
        "trace/children.py",
        "trace/sub/",
        "trace/sub/deep.py",
        "codec/",
        "z.py",
    ]
    assert cells("| `x/` | `a | b` c | d |") == ["`x/`", "`a | b` c", "d"]


def test_every_module_of_the_package_is_in_the_architecture_table():
    rows = table()
    covered = {module for names in rows.values() for name in names for module in matches(name)}
    missing = sorted(modules() - covered)
    assert not missing, (
        "modules missing from the package table in docs/architecture.md (add each, with what "
        f"it does, to its package's row): {missing}"
    )


def test_the_architecture_table_names_only_modules_that_exist():
    stale = sorted(
        name or ROOT_ROW
        for package, names in table().items()
        for name in names
        if not is_outside_reference(name, package)
        and not (matches(name) or (name.endswith("/") and (PACKAGE / name).is_dir()))
    )
    assert not stale, (
        f"docs/architecture.md's package table names what durable_loop/ does not have: {stale}"
    )
