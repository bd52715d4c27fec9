"""Parallel tools: one turn in which the model asks for 8 tools of 1 s each must take well
under 8 s; target: under 1.5 s of wall time for the whole tool turn.

Measured on durable-loop's own worker against a zero-latency scripted endpoint, for async
tools (``await asyncio.sleep(1)``) and for plain sync functions (``time.sleep(1)``, run in
worker threads), beside the in-process floor (``asyncio.gather`` of the same 8 calls).
The tool turn's wall time is the gap between the LLM request that asked for the tools and
the next LLM request (which carries their 8 results): it includes the LLM activity, two
workflow tasks and the 8 tool activities.

    .venv/bin/python -m bench.parallel_tools [--tools 8] [--seconds 1] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import uuid
from pathlib import Path

from pydantic import BaseModel

from bench.harness import dev_server, durable_worker, machine, median, publish, settings_for
from durable_loop.activities.dispatch import TOOL_THREADS
from durable_loop.core.registry import ToolRegistry
from durable_loop.testing import ScriptedLLM, reply

TARGET_S = 1.5
DEFAULT_OUTPUT = Path(__file__).parent / "results" / "parallel_tools.json"


def sleepy_tools(seconds: float) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool(name="wait_async")
    async def wait_async(n: int) -> dict[str, int]:
        """Wait (async)."""
        await asyncio.sleep(seconds)
        return {"n": n}

    @registry.tool(name="wait_sync")
    def wait_sync(n: int) -> dict[str, int]:
        """Wait (a plain function, run in a worker thread)."""
        time.sleep(seconds)
        return {"n": n}

    return registry


class Variant(BaseModel):
    tool: str
    tools: int
    tool_seconds: float
    tool_turn_wall_s: float
    """Median over the repeats."""
    repeats_s: list[float]
    message_wall_s: float
    in_process_floor_s: float
    target_s: float = TARGET_S
    target_met: bool
    all_ok: bool


class ParallelToolsReport(BaseModel):
    variants: list[Variant]
    target_met: bool
    machine: dict[str, object]


async def floor(registry: ToolRegistry, tool: str, count: int) -> float:
    fn = registry.get(tool)
    assert fn is not None
    from durable_loop.core.registry import ToolContext

    ctx = ToolContext(
        session_id="floor",
        workflow_id="floor",
        call_id="c",
        turn=1,
        attempt=1,
        idempotency_key="floor",
    )
    started = time.perf_counter()
    await asyncio.gather(*(fn.call({"n": i}, ctx, TOOL_THREADS) for i in range(count)))
    return time.perf_counter() - started


async def one_turn(w, llm: ScriptedLLM, tool: str, count: int) -> tuple[float, float, bool]:
    """(tool turn wall, message wall, every call ok) of one message with ``count`` calls."""
    model = f"par-{tool}-{uuid.uuid4().hex[:6]}"
    calls = [(tool, {"n": i}, f"call_{i}") for i in range(count)]
    llm.script(model, [reply.tool_calls(*calls), reply.text("all done")])
    sid = f"par-{uuid.uuid4().hex[:8]}"
    await w.sessions.start(sid, settings_for(llm, model))
    started = time.perf_counter()
    result = await w.sessions.send(sid, f"run {count} tools at once")
    message_wall = time.perf_counter() - started
    first, second = llm.requests(model)[:2]
    await w.sessions.handle(sid).terminate("bench done")
    ok = (
        result.status == "completed"
        and len(result.tool_calls) == count
        and all(c.ok for c in result.tool_calls)
    )
    return second.received_at - first.received_at, message_wall, ok


async def run(count: int, seconds: float, repeats: int) -> list[Variant]:
    registry = sleepy_tools(seconds)
    variants = []
    with tempfile.TemporaryDirectory(prefix="parallel-") as tmp, ScriptedLLM() as llm:
        async with dev_server() as env, durable_worker(env, registry, Path(tmp)) as w:
            await one_turn(w, llm, "wait_async", 1)  # warm up: first instance, first polls
            for tool in ("wait_async", "wait_sync"):
                runs = [await one_turn(w, llm, tool, count) for _ in range(repeats)]
                turn_wall = median([r[0] for r in runs])
                variants.append(
                    Variant(
                        tool=tool,
                        tools=count,
                        tool_seconds=seconds,
                        tool_turn_wall_s=round(turn_wall, 3),
                        repeats_s=[round(r[0], 3) for r in runs],
                        message_wall_s=round(median([r[1] for r in runs]), 3),
                        in_process_floor_s=round(await floor(registry, tool, count), 3),
                        target_met=turn_wall < TARGET_S * seconds,
                        all_ok=all(r[2] for r in runs),
                    )
                )
                print(
                    f"{tool}: {count} x {seconds}s tools in one turn: "
                    f"{turn_wall:.3f}s (floor {variants[-1].in_process_floor_s}s, "
                    f"target < {TARGET_S * seconds}s)",
                    flush=True,
                )
    return variants


def main(argv: list[str] | None = None) -> ParallelToolsReport:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3, help="messages per variant")
    parser.add_argument("--quick", action="store_true", help="one repeat of 0.25 s tools")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    if not 1 <= args.tools <= 64 or args.seconds <= 0:
        parser.error("BAD_ARGUMENT: --tools 1..64 and --seconds > 0")
    repeats = 1 if args.quick else max(1, args.repeats)
    if args.quick:
        args.seconds = 0.25
    variants = asyncio.run(run(args.tools, args.seconds, repeats))
    report = ParallelToolsReport(
        variants=variants, target_met=all(v.target_met for v in variants), machine=machine()
    )
    publish(report, args.output)
    return report


if __name__ == "__main__":
    main()
