import pytest

from durable_loop.cli.errors import CliError
from durable_loop.core.catalog import CATALOG
from durable_loop.evals.filters import parse_filter, select_models
from durable_loop.evals.metrics import percentile
from durable_loop.evals.profiles import BUILTIN, profiles
from durable_loop.evals.selection import select_scenarios


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([], 50, 0.0),
        ([7], 95, 7.0),
        ([1, 2, 3, 4], 50, 2.5),
        ([1, 2, 3, 4, 5], 95, 4.8),
        ([10, 1, 5], 0, 1.0),
        ([10, 1, 5], 100, 10.0),
    ],
)
def test_percentile_interpolates_like_numpy(values, q, expected):
    assert percentile(values, q) == pytest.approx(expected)


def test_percentile_rejects_out_of_range():
    with pytest.raises(ValueError):
        percentile([1.0], 101)


def test_filter_terms_parse_kinds_and_exclusions():
    terms = parse_filter("openai/*, provider:gemini,tag:stable, !*-preview")
    assert [(t.kind, t.pattern, t.exclude) for t in terms] == [
        ("id", "openai/*", False),
        ("provider", "gemini", False),
        ("tag", "stable", False),
        ("id", "*-preview", True),
    ]


def test_filter_selects_by_tag_provider_wildcard_and_excludes():
    stable = {m.model for m in select_models("tag:stable")}
    assert stable == {e.model for e in CATALOG if "stable" in e.tags}
    gemini = select_models("provider:gemini,!*-preview")
    assert [m.model for m in gemini] == ["gemini-2.5-flash"]
    qwen = {m.model for m in select_models("qwen/*")}
    assert qwen and all(m.startswith("qwen/") for m in qwen)


def test_unknown_literal_id_is_kept_for_any_endpoint():
    [model] = select_models("my-org/my-model", default_provider="openai")
    assert (model.provider, model.model, model.entry) == ("openai", "my-org/my-model", None)


def test_filter_matching_nothing_lists_the_catalog():
    with pytest.raises(CliError) as err:
        select_models("tag:nope")
    assert err.value.code == "NO_MODELS"
    assert "openai/gpt-5.2" in err.value.message


def test_scenario_selection_combines_presets_and_names():
    names = [s.name for s in select_scenarios("default,happy_path_parallel")]
    assert names == [
        "happy_path",
        "missing_workspace_id",
        "type_error_recovery",
        "long_arguments_guard",
        "chat_only",
        "happy_path_parallel",
    ]
    assert len(select_scenarios("all")) >= 10
    with pytest.raises(CliError) as err:
        select_scenarios("smoke,nope")
    assert err.value.code == "UNKNOWN_SCENARIO" and "happy_path" in err.value.message


def test_profiles_apply_per_model():
    [catalog] = profiles("catalog")
    local = next(m for m in select_models("qwen2.5-coder-1.5b-instruct"))
    unknown = select_models("x/y")[0]
    assert catalog.resolve(local).options == {"temperature": 0, "max_tokens": 768}
    assert catalog.resolve(unknown) is None
    assert BUILTIN["qwen_recommended"].resolve(unknown) is None
    with pytest.raises(CliError) as err:
        profiles("nope")
    assert err.value.code == "UNKNOWN_PROFILE" and "greedy" in err.value.message
