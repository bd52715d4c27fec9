from durable_loop.core.registry import ToolRegistry
from durable_loop.testing import reply
from tests.conftest import settings_for, unique


def calculator() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return registry


async def test_happy_path(loop_worker, scripted_llm):
    model = unique("m")
    scripted_llm.script(model, [reply.tool_call("add", {"a": 2, "b": 3}), reply.text("5")])
    async with loop_worker(calculator()) as w:
        sid = unique("s")
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        result = await w.sessions.send(sid, "what is 2+3?")
    assert result.status == "completed", result
    assert result.reply == "5"
    assert [t.name for t in result.tool_calls] == ["add"]
    second = scripted_llm.requests(model)[1]
    assert second.messages[-1]["role"] == "tool"
    assert '"data":5' in second.messages[-1]["content"]
