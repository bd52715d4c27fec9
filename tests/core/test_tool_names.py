import pytest

from durable_loop.core.registry import ToolRegistry
from durable_loop.core.tool_names import TOOL_NAME_PATTERN, check_tool_name, provider_safe_name
from durable_loop.core.tools import ToolSpec


def search(query: str) -> str:
    return query


@pytest.mark.parametrize(
    "name", ["calculate_BMI", "ChaFod", "getWeather", "get-sum", "_private", "a", "x" * 64]
)
def test_names_every_provider_accepts_are_registered_as_they_are(name):
    tool = ToolRegistry().register(search, name=name)
    assert tool.spec.name == name and tool.spec.original_name is None


@pytest.mark.parametrize("bad", ["musicCharts.getMostPlayed", "-x", "9lives", "a b", "x" * 65])
def test_other_names_are_refused_with_the_rule(bad):
    with pytest.raises(ValueError, match="not cross-provider safe"):
        check_tool_name(bad)
    with pytest.raises(ValueError, match="not cross-provider safe"):
        ToolSpec(name=bad)


@pytest.mark.parametrize(
    ("original", "mapped"),
    [
        ("musicCharts.getMostPlayed", "musicCharts_getMostPlayed"),
        ("files.read", "files_read"),
        ("Shout Text", "Shout_Text"),
        ("get-sum", "get-sum"),
        ("2fast", "t_2fast"),
        ("-dash", "t_-dash"),
        ("", "tool"),
    ],
)
def test_the_mapping_replaces_what_providers_refuse(original, mapped):
    assert provider_safe_name(original) == mapped


def test_long_and_clashing_names_get_a_deterministic_hash():
    long_name = "very.long." + "x" * 80
    first = provider_safe_name(long_name)
    assert len(first) == 64 and TOOL_NAME_PATTERN.fullmatch(first)
    assert provider_safe_name(long_name) == first
    taken: set[str] = set()
    a = provider_safe_name("a.b", taken)
    b = provider_safe_name("a_b", taken)
    assert a == "a_b" and b != a and TOOL_NAME_PATTERN.fullmatch(b)
    assert taken == {a, b}
    assert provider_safe_name("a_b", {"a_b"}) == b


def test_a_mapped_spec_keeps_its_original_name_beside_the_model_facing_one():
    spec = ToolSpec(
        name=provider_safe_name("musicCharts.getMostPlayed"),
        original_name="musicCharts.getMostPlayed",
    )
    dumped = spec.model_dump(mode="json")
    assert dumped["name"] == "musicCharts_getMostPlayed"
    assert dumped["original_name"] == "musicCharts.getMostPlayed"


def test_an_unmapped_spec_keeps_the_payload_it_had_before():
    assert "original_name" not in ToolSpec(name="getWeather").model_dump(mode="json")
