import pytest

from durable_loop.core.config import RuntimeConfig
from durable_loop.core.retry import RetrySettings
from durable_loop.core.tools import visible_tool_names
from durable_loop.tools.ensembles import (
    Ensemble,
    EnsembleDefaults,
    ToolProfile,
    apply_profile,
    registry_from,
    resolve_profile,
)
from durable_loop.tools.ensembles.profiles import ProfileError


def build() -> list[Ensemble]:
    io = Ensemble(
        "io",
        defaults=EnsembleDefaults(
            timeout_s=7, retry=RetrySettings(maximum_attempts=2), task_queue="io-q", dedupe=True
        ),
    )

    @io.tool()
    def read_note(title: str) -> str:
        """Read a note."""
        return title

    @io.tool(timeout_s=1.5, dedupe=False)
    def write_note(title: str, body: str) -> str:
        """Write a note."""
        return body

    maths = Ensemble("maths")

    @maths.tool(local=True)
    def add(a: int, b: int) -> int:
        return a + b

    off = Ensemble("admin", enabled=False)

    @off.tool()
    def wipe() -> str:
        return "gone"

    return [io, maths, off]


def test_defaults_fill_unset_fields_and_explicit_values_win():
    registry = registry_from(build())
    read = registry.get("read_note").spec
    write = registry.get("write_note").spec
    assert (read.timeout_s, read.retry.maximum_attempts, read.task_queue, read.dedupe) == (
        7,
        2,
        "io-q",
        True,
    )
    assert (write.timeout_s, write.dedupe, write.task_queue) == (1.5, False, "io-q")
    assert read.ensemble == "io" and registry.get("add").spec.ensemble == "maths"
    assert registry.get("add").spec.local is True
    assert read.description == "Read a note."
    assert read.parameters["required"] == ["title"]


def test_disabled_ensemble_registers_nothing():
    ensembles = build()
    registry = registry_from(ensembles)
    assert registry.get("wipe") is None
    assert sorted(registry.names()) == ["add", "read_note", "write_note"]
    ensembles[2].enabled = True
    assert registry_from(ensembles).get("wipe") is not None


def test_disabled_tool_is_left_out():
    ensemble = Ensemble("e")
    ensemble.register(lambda: 1, name="one", enabled=False)
    ensemble.register(lambda: 2, name="two")
    assert [s.name for s in ensemble.specs()] == ["two"]
    assert ensemble.tool_names() == ["one", "two"]


def test_profile_resolves_to_allow_and_deny_lists_the_loop_consumes():
    ensembles = build()
    registry = registry_from(ensembles)
    profile = ToolProfile(name="readonly", ensembles=["io", "maths"], exclude_tools=["write_note"])
    selection = resolve_profile(profile, ensembles)
    assert selection.allowlist == ["add", "read_note"]
    assert selection.denylist == ["write_note"]
    runtime = apply_profile(RuntimeConfig(), selection)
    assert visible_tool_names(
        registry.catalog(), runtime.tool_allowlist, runtime.tool_denylist
    ) == [
        "read_note",
        "add",
    ]


def test_profile_without_includes_only_denies_and_never_widens():
    ensembles = build()
    selection = resolve_profile(ToolProfile(name="no-io", exclude_ensembles=["io"]), ensembles)
    assert selection.allowlist is None
    assert selection.denylist == ["read_note", "write_note"]
    narrowed = apply_profile(RuntimeConfig(tool_allowlist=["add", "read_note"]), selection)
    assert narrowed.tool_allowlist == ["add", "read_note"]
    assert narrowed.tool_denylist == ["read_note", "write_note"]


def test_profile_with_unknown_names_is_refused_with_a_code():
    with pytest.raises(ProfileError) as info:
        resolve_profile(ToolProfile(name="p", ensembles=["nope"], tools=["ghost"]), build())
    assert info.value.code == "PROFILE_UNKNOWN_NAME"
    assert "ensemble 'nope'" in str(info.value) and "tool 'ghost'" in str(info.value)


def test_duplicate_tool_names_across_ensembles_are_refused():
    a, b = Ensemble("a"), Ensemble("b")
    a.register(lambda: 1, name="same")
    b.register(lambda: 2, name="same")
    with pytest.raises(ValueError, match="already registered"):
        registry_from([a, b])
