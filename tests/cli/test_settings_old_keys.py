"""A settings file with the flat recovery keys of earlier versions still loads, and the
CLI says which new key each became."""

from __future__ import annotations

import json

from durable_loop.cli.commands.send import load_session_settings


def load(path):
    return load_session_settings(
        path, model=None, base_url=None, api_key_env=None, provider=None, system=None
    )


def test_old_keys_load_and_are_named_once_each(tmp_path, capsys):
    path = tmp_path / "settings.json"
    runtime = {
        "call_requested_tool": True,
        "call_requested_tool_text": "Call {name}.",
        "max_turns": 4,
    }
    path.write_text(json.dumps({"llm": {"model": "m"}, "runtime": runtime}))
    settings = load(path)
    assert settings.runtime.recoveries["call_requested_tool"].model_dump() == {
        "text": "Call {name}."
    }
    assert capsys.readouterr().err.splitlines() == [
        "settings: runtime.call_requested_tool is read as runtime.recoveries.call_requested_tool "
        "(the old key still works)",
        "settings: runtime.call_requested_tool_text is read as "
        "runtime.recoveries.call_requested_tool.text (the old key still works)",
    ]


def test_new_keys_print_nothing(tmp_path, capsys):
    path = tmp_path / "settings.toml"
    path.write_text('[llm]\nmodel = "m"\n[runtime]\nrecoveries = ["call_requested_tool"]\n')
    assert load(path).runtime.uses("call_requested_tool")
    assert capsys.readouterr().err == ""
