"""`durable-loop send --output-schema FILE`: the typed answer is printed as ``output``; a
file that is not a JSON Schema is an INVALID_SETTING line and nothing is sent."""

from __future__ import annotations

import json

from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from tests.cli.test_cli_proposals import invoke
from tests.conftest import settings_for, unique

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


async def test_send_with_an_output_schema_prints_the_output(
    loop_worker, scripted_llm, temporal_env, tmp_path
):
    model, sid = unique("m"), unique("s")
    schema_file, bad_file = tmp_path / "schema.json", tmp_path / "bad.json"
    schema_file.write_text(json.dumps(SCHEMA))
    bad_file.write_text(json.dumps({"type": "integer", "minimum": "zero"}))
    scripted_llm.script(model, [reply.text("seven"), reply.text('{"n": 7}')])
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        queue = ["--task-queue", w.task_queue]
        sent = await invoke(
            temporal_env, "send", sid, "count", "--output-schema", str(schema_file), *queue
        )
        bad = await invoke(
            temporal_env, "send", sid, "again", "--output-schema", str(bad_file), *queue
        )
        status = await w.sessions.status(sid)
    assert sent.exit_code == 0, sent.output
    assert sent.stdout.strip() == '{"n": 7}'
    assert '  output {"n": 7}' in sent.stderr and "2 turn(s)" in sent.stderr
    assert bad.exit_code != 0 and "INVALID_SETTING" in bad.output
    assert "not a valid JSON Schema" in bad.output
    assert status.messages_done == 1 and len(scripted_llm.requests(model)) == 2


async def test_an_answer_that_fails_the_schema_is_not_printed_as_the_answer(
    loop_worker, scripted_llm, temporal_env, tmp_path
):
    model, sid = unique("m"), unique("s")
    schema_file = tmp_path / "schema.json"
    schema_file.write_text(json.dumps(SCHEMA))
    runtime = RuntimeConfig(output_retries=1)
    scripted_llm.script(model, [reply.text("seven"), reply.text("still seven")])
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        sent = await invoke(
            temporal_env, "send", sid, "count", "--output-schema", str(schema_file),
            "--task-queue", w.task_queue,
        )  # fmt: skip
    assert sent.exit_code == 1, sent.output
    assert sent.stdout == "", "an invalid answer is not printed as the answer"
    assert "error OUTPUT_INVALID:" in sent.stderr
    assert "  invalid answer (not valid against the output schema): still seven" in sent.stderr
