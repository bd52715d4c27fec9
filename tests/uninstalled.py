"""Making an installed package look absent, as in a venv without the extra that brings it."""

from __future__ import annotations

import importlib.abc
import sys

import pytest


class Uninstalled(importlib.abc.MetaPathFinder):
    def __init__(self, package: str) -> None:
        self.package = package

    def find_spec(self, fullname: str, path: object, target: object = None) -> None:
        if fullname == self.package:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)


def uninstall(monkeypatch: pytest.MonkeyPatch, package: str) -> None:
    """Until the test ends, ``import package`` (and its submodules) fails as if not installed."""
    for name in [m for m in sys.modules if m == package or m.startswith(f"{package}.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [Uninstalled(package), *sys.meta_path])
