"""A missing extra is one coded line naming what to install; anything else keeps its error."""

from __future__ import annotations

import pytest

from durable_loop.core.errors import ErrorCode
from durable_loop.core.extras import EXTRA_OF, MissingExtra, import_extra
from tests.uninstalled import uninstall


@pytest.mark.parametrize("package", sorted(EXTRA_OF))
@pytest.mark.parametrize("submodule", ["", ".sub"])
def test_a_missing_package_names_its_extra(
    package: str, submodule: str, monkeypatch: pytest.MonkeyPatch
):
    uninstall(monkeypatch, package)
    with pytest.raises(MissingExtra) as caught:
        import_extra(package + submodule, "this feature")
    assert caught.value.code == ErrorCode.EXTRA_NOT_INSTALLED
    assert str(caught.value) == (
        f"EXTRA_NOT_INSTALLED: this feature needs {package}, which is not installed: "
        f"pip install 'durable-loop[{EXTRA_OF[package]}]'"
    )


def test_a_missing_submodule_of_an_installed_package_is_not_a_missing_extra():
    with pytest.raises(ModuleNotFoundError):
        import_extra("psycopg.no_such_module", "this feature")


def test_only_packages_of_extras_are_imported_this_way():
    with pytest.raises(ValueError, match="not a package of an extra"):
        import_extra("json", "this feature")


def test_a_postgres_store_without_psycopg_fails_before_any_io(monkeypatch: pytest.MonkeyPatch):
    from durable_loop.store import StoreConfig

    uninstall(monkeypatch, "psycopg")
    with pytest.raises(MissingExtra, match=r"pip install 'durable-loop\[postgres\]'"):
        StoreConfig(url="postgresql://nobody@127.0.0.1:9/none")
    assert StoreConfig(url="sqlite:///store.db").url == "sqlite:///store.db"


def test_the_codec_without_cryptography(monkeypatch: pytest.MonkeyPatch):
    from durable_loop.client.codec import AesGcmCodec, KeyRing

    ring = KeyRing.parse("k1:" + "A" * 43 + "=")
    uninstall(monkeypatch, "cryptography")
    with pytest.raises(MissingExtra, match=r"pip install 'durable-loop\[crypto\]'"):
        AesGcmCodec(ring)
