"""Sub-agents declared in an ensemble file (``[[sub_agents]]``)."""

from __future__ import annotations

import pytest

from durable_loop.core.sub_agents import check_sub_agents
from durable_loop.tools.ensembles import EnsembleLoadError, load_ensemble, registry_from
from tests.tools.ensembles.test_toml import problems_of, valid_files, write

SUB_AGENTS = """
[[sub_agents]]
name = "note_keeper"
description = "Reads notes and sums them up"
system_prompt = "You keep notes."
tools = ["read_note", "word_count"]
max_turns = 4

[sub_agents.llm]
model = "small-model"
base_url = "http://127.0.0.1:8081"
"""


def with_sub_agents(extra: str) -> dict[str, str]:
    files = valid_files()
    files["notes.toml"] += extra
    return files


def test_a_sub_agent_in_an_ensemble_file_is_registered_with_its_tools(tmp_path):
    ensemble = load_ensemble(write(tmp_path, with_sub_agents(SUB_AGENTS)))
    registry = registry_from([ensemble])
    [config] = registry.sub_agents()
    assert config.name == "note_keeper" and config.max_turns == 4
    assert config.llm is not None and config.llm.model == "small-model"
    spec = {s.name: s for s in registry.specs()}["note_keeper"]
    assert spec.sub_agent and spec.ensemble == "notes"
    check_sub_agents(registry.specs(), registry.sub_agents())


def test_bad_sub_agents_are_descriptor_problems(tmp_path):
    itself = SUB_AGENTS.replace('tools = ["read_note", "word_count"]', 'tools = ["note_keeper"]')
    with pytest.raises(EnsembleLoadError) as err:
        load_ensemble(write(tmp_path, with_sub_agents(itself)))
    [(file, line, field)] = problems_of(err)
    assert (file, field) == ("notes.toml", "sub_agents[0].name")
    assert (
        line == with_sub_agents(itself)["notes.toml"].splitlines().index('name = "note_keeper"') + 1
    )
    assert "lists itself" in err.value.problems[0].message

    bad_schema = SUB_AGENTS.replace(
        "max_turns = 4", 'max_turns = 4\noutput_schema = { type = "no-such-type" }'
    )
    with pytest.raises(EnsembleLoadError) as err:
        load_ensemble(write(tmp_path, with_sub_agents(bad_schema)))
    assert "output_schema is not a JSON Schema" in str(err.value)

    clash = SUB_AGENTS.replace('name = "note_keeper"', 'name = "read_note"').replace(
        '"read_note", "word_count"', '"word_count"'
    )
    with pytest.raises(EnsembleLoadError) as err:
        load_ensemble(write(tmp_path, with_sub_agents(clash)))
    assert "'read_note' is already declared" in str(err.value)
