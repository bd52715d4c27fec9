"""Optional dependencies: a plain ``pip install durable-loop`` runs everything on SQLite,
and each extra's package is imported only where that extra is used, through
:func:`import_extra`, so a missing one is one coded line naming what to install instead of
a traceback at import time."""

from __future__ import annotations

import importlib
from types import ModuleType

from durable_loop.core.errors import DurableLoopError, ErrorCode

EXTRA_OF: dict[str, str] = {
    "psycopg": "postgres",
    "cryptography": "crypto",
    "xllamacpp": "local-llm",
    "matplotlib": "evals",
}
"""The top-level package each extra of pyproject.toml brings, by that package's name."""


class MissingExtra(DurableLoopError):
    """An optional package is not installed; the message names the extra to install."""

    show_code = True

    def __init__(self, package: str, purpose: str) -> None:
        self.package = package
        self.extra = EXTRA_OF[package]
        super().__init__(
            ErrorCode.EXTRA_NOT_INSTALLED,
            f"{purpose} needs {package}, which is not installed: "
            f"pip install 'durable-loop[{self.extra}]'",
        )


def import_extra(module: str, purpose: str) -> ModuleType:
    """Import ``module`` (a package of :data:`EXTRA_OF`, or one of its submodules); raise
    :class:`MissingExtra` when its package is not installed. A module that is installed
    but fails to import keeps its own error."""
    package = module.partition(".")[0]
    if package not in EXTRA_OF:
        raise ValueError(f"{package!r} is not a package of an extra")
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        if err.name == package:
            raise MissingExtra(package, purpose) from None
        raise
