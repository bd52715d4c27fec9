from pathlib import Path
from textwrap import dedent

import pytest

from durable_loop.tools.ensembles import (
    EnsembleLoadError,
    load_ensemble,
    load_ensembles,
    load_profiles,
    registry_from,
    resolve_profile,
)

NOTES_ENSEMBLE = """\
[ensemble]
name = "notes"
description = "Personal notes"

[defaults]
timeout_s = 5
task_queue = "notes-q"

[defaults.retry]
maximum_attempts = 2

[[tools]]
source = "tools/read_note.toml"

[[tools]]
source = "tools/word_count.toml"
"""

READ_NOTE = """\
[tool]
name = "read_note"
description = "Read one note by title"
callable = "tests.tools.ensembles.sample_tools:read_note"
dedupe = true

[arguments]
type = "object"
required = ["title"]
additionalProperties = false

[arguments.properties.title]
type = "string"
enum = ["groceries", "todo"]
"""

WORD_COUNT = """\
[tool]
name = "word_count"
description = "Count words"
callable = "tests.tools.ensembles.sample_tools:word_count"
local = true
timeout_s = 1

[arguments]
type = "object"
required = ["text"]
properties = { text = { type = "string" } }
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(dedent(text))
    return root / next(iter(files))


def valid_files() -> dict[str, str]:
    return {
        "notes.toml": NOTES_ENSEMBLE,
        "tools/read_note.toml": READ_NOTE,
        "tools/word_count.toml": WORD_COUNT,
    }


def problems_of(err: pytest.ExceptionInfo[EnsembleLoadError]) -> list[tuple[str, int | None, str]]:
    return [(Path(p.file).name, p.line, p.field) for p in err.value.problems]


def test_valid_descriptors_load_into_a_working_registry(tmp_path):
    ensemble = load_ensemble(write(tmp_path, valid_files()))
    registry = registry_from([ensemble])
    read = registry.get("read_note")
    count = registry.get("word_count")
    assert read.spec.dedupe and read.spec.timeout_s == 5 and read.spec.task_queue == "notes-q"
    assert read.spec.retry.maximum_attempts == 2
    assert count.spec.local and count.spec.timeout_s == 1
    assert read.spec.parameters["required"] == ["title"]
    assert read.fn("todo") == "call mum"
    assert count.fn(text="a b c") == 3


def test_bad_schema_is_refused_with_file_line_and_field(tmp_path):
    files = valid_files()
    files["tools/read_note.toml"] = READ_NOTE.replace('type = "string"', 'type = "strin"')
    with pytest.raises(EnsembleLoadError) as err:
        load_ensemble(write(tmp_path, files))
    assert err.value.code == "DESCRIPTOR_INVALID"
    (problem,) = err.value.problems
    assert Path(problem.file).name == "read_note.toml"
    assert problem.field == "arguments.properties.title.type"
    assert problem.line == READ_NOTE.splitlines().index('type = "string"') + 1
    assert "'strin' is not valid" in problem.message
    assert f"read_note.toml:{problem.line}: arguments.properties.title.type" in str(err.value)


def test_every_problem_is_reported_at_once(tmp_path):
    files = valid_files()
    files["tools/read_note.toml"] = (
        READ_NOTE.replace('required = ["title"]', "required = 3")
        .replace('name = "read_note"', 'name = "Read.Note"')
        .replace("dedupe = true", 'dedupe = true\ncolour = "red"')
    )
    files["tools/word_count.toml"] = WORD_COUNT.replace(
        "sample_tools:word_count", "sample_tools:missing"
    )
    files["notes.toml"] = NOTES_ENSEMBLE + '\n[[tools]]\nsource = "tools/absent.toml"\n'
    with pytest.raises(EnsembleLoadError) as err:
        load_ensemble(write(tmp_path, files))
    found = problems_of(err)
    assert ("read_note.toml", 2, "tool.name") in found
    assert ("read_note.toml", 6, "tool.colour") in found
    assert ("read_note.toml", 10, "arguments.required") in found
    assert ("word_count.toml", 4, "tool.callable") in found
    assert ("notes.toml", 19, "tools[2].source") in found
    assert len(found) == 5, found


def test_schema_and_name_problems_are_all_listed(tmp_path):
    files = valid_files()
    files["tools/read_note.toml"] = READ_NOTE.replace(
        'required = ["title"]', "required = 3"
    ).replace('name = "read_note"', 'name = "Read.Note"')
    with pytest.raises(EnsembleLoadError) as err:
        load_ensemble(write(tmp_path, files))
    found = problems_of(err)
    assert ("read_note.toml", 2, "tool.name") in found
    assert ("read_note.toml", 9, "arguments.required") in found
    assert len(found) == 2, found


def test_root_schema_must_be_an_object(tmp_path):
    files = valid_files()
    files["tools/word_count.toml"] = WORD_COUNT.replace('type = "object"', 'type = "array"')
    with pytest.raises(EnsembleLoadError) as err:
        load_ensemble(write(tmp_path, files))
    assert problems_of(err) == [("word_count.toml", 9, "arguments.type")]


def test_broken_toml_syntax_reports_its_line(tmp_path):
    files = valid_files()
    files["tools/word_count.toml"] = WORD_COUNT.replace("local = true", "local = = true")
    with pytest.raises(EnsembleLoadError) as err:
        load_ensemble(write(tmp_path, files))
    ((name, line, field),) = problems_of(err)
    assert (name, line, field) == ("word_count.toml", 5, "(root)")
    assert "invalid TOML" in err.value.problems[0].message


def test_wrong_value_type_in_ensemble_defaults(tmp_path):
    files = valid_files()
    files["notes.toml"] = NOTES_ENSEMBLE.replace("timeout_s = 5", 'timeout_s = "soon"')
    with pytest.raises(EnsembleLoadError) as err:
        load_ensemble(write(tmp_path, files))
    assert problems_of(err) == [("notes.toml", 6, "defaults.timeout_s")]


def test_disabled_tools_are_validated_but_not_imported(tmp_path):
    files = valid_files()
    files["tools/word_count.toml"] = WORD_COUNT.replace(
        "local = true", "local = true\nenabled = false"
    ).replace("sample_tools:word_count", "not_a_module:nothing")
    ensemble = load_ensemble(write(tmp_path, files))
    assert [s.name for s in ensemble.specs()] == ["read_note"]
    assert ensemble.tool_names() == ["read_note", "word_count"]


def test_same_tool_in_two_ensembles_is_refused(tmp_path):
    first = write(tmp_path / "a", valid_files())
    second_files = valid_files()
    second_files["notes.toml"] = NOTES_ENSEMBLE.replace('name = "notes"', 'name = "more_notes"')
    second = write(tmp_path / "b", second_files)
    with pytest.raises(EnsembleLoadError) as err:
        load_ensembles([first, second])
    messages = " ".join(p.message for p in err.value.problems)
    assert "'read_note' is also declared by 'notes'" in messages


def test_profiles_file(tmp_path):
    ensemble = load_ensemble(write(tmp_path, valid_files()))
    profiles_path = tmp_path / "profiles.toml"
    profiles_path.write_text('[profiles.counting]\ntools = ["word_count"]\n')
    profiles = load_profiles(profiles_path)
    selection = resolve_profile(profiles["counting"], [ensemble])
    assert selection.allowlist == ["word_count"] and selection.denylist == []
    profiles_path.write_text('[profiles.bad]\ntools = ["word_count"]\ncolour = ["x"]\n')
    with pytest.raises(EnsembleLoadError) as err:
        load_profiles(profiles_path)
    assert problems_of(err) == [("profiles.toml", 3, "profiles.bad.colour")]


def test_requires_approval_from_the_tool_or_the_ensemble_defaults(tmp_path):
    files = valid_files()
    files["tools/word_count.toml"] = WORD_COUNT.replace("local = true", "requires_approval = true")
    registry = registry_from([load_ensemble(write(tmp_path, files))])
    assert registry.get("word_count").spec.requires_approval
    assert not registry.get("read_note").spec.requires_approval
    files["notes.toml"] = NOTES_ENSEMBLE.replace(
        "[defaults]", "[defaults]\nrequires_approval = true"
    )
    registry = registry_from([load_ensemble(write(tmp_path, files))])
    assert registry.get("read_note").spec.requires_approval


def test_effect_once_and_its_reconcile_from_the_tool_or_the_ensemble_defaults(tmp_path):
    files = valid_files()
    files["tools/word_count.toml"] = WORD_COUNT.replace(
        "local = true",
        'effect = "once"\nreconcile = "tests.tools.ensembles.sample_tools:word_count_done"',
    )
    registry = registry_from([load_ensemble(write(tmp_path, files))])
    counted = registry.get("word_count")
    assert counted.spec.effect == "once" and counted.reconcile is not None
    assert registry.get("read_note").spec.effect == "repeatable"
    files["notes.toml"] = NOTES_ENSEMBLE.replace("[defaults]", '[defaults]\neffect = "once"')
    registry = registry_from([load_ensemble(write(tmp_path, files))])
    assert registry.get("read_note").spec.effect == "once"


def test_a_reconcile_without_effect_once_is_a_located_problem(tmp_path):
    files = valid_files()
    files["tools/word_count.toml"] = WORD_COUNT.replace(
        "local = true", 'reconcile = "tests.tools.ensembles.sample_tools:word_count_done"'
    )
    with pytest.raises(EnsembleLoadError) as err:
        load_ensemble(write(tmp_path, files))
    assert problems_of(err) == [("word_count.toml", 5, "tool.reconcile")]
    assert 'reconcile goes with effect = "once"' in err.value.problems[0].message
