"""Cost of one transcript-store call on SQLite: through aiosqlite with statements built per
call (what the store did before) vs ``TranscriptStore`` now (statements built once, the
sqlite3 driver in a thread pool via ``store.database.Database``), side by side in one run
on the same file.

Each operation runs N times one after another, then N times with 64 in flight; the
process's CPU time and the wall time per call are reported for both paths.

Then the workspace store's calls on the same footing: a snapshot read, a one-op draft
write (read-check-write transaction with its audit row), and a proposal recorded then
confirmed (two transactions).

Then the windowed read of a long session (``llm_request.window_history``: the newest
messages that fit a 24,000-character window, the newest summary below them, a count of the
rest) on a 20,000-message transcript, with the ``(session_id, role, seq)`` index of
migration 0004 and after dropping it.

    .venv/bin/python -m bench.store_ops [--calls 1000] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from pydantic import BaseModel, JsonValue
from sqlalchemy import select, text
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncEngine

from bench.harness import machine, publish
from durable_loop.activities.turn_history import window_history
from durable_loop.core.context_window import summary_message
from durable_loop.core.messages import Message
from durable_loop.core.proposals import SettleInput
from durable_loop.core.reply_meta import SUMMARY_META_KEY
from durable_loop.store import StoreConfig, TranscriptStore, open_store
from durable_loop.store.transcript import TRANSCRIPT, TranscriptRow, _row, _to_stored
from durable_loop.store.workspace import ChangeSource, open_workspace_store
from durable_loop.store.workspace_proposals import propose, settle

DEFAULT_OUTPUT = Path(__file__).parent / "results" / "store_ops.json"
CONCURRENCY = 64
SESSION = "bench"
ROWS = 10
ROLE_INDEX = "ix_transcript_messages_session_role_seq"


class AiosqlitePath:
    """The store's calls as they were written against the async engine (aiosqlite),
    statements built per call."""

    def __init__(self, store: TranscriptStore) -> None:
        self.engine: AsyncEngine = store.engine

    async def get(self, seq: int) -> object:
        async with self.engine.connect() as conn:
            query = select(TRANSCRIPT).where(
                TranscriptRow.session_id == SESSION, TranscriptRow.seq == seq
            )
            row = (await conn.execute(query)).first()
        return _to_stored(row) if row else None

    async def read(self, upto: int) -> object:
        query = select(TRANSCRIPT).where(TranscriptRow.session_id == SESSION)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query.where(TranscriptRow.seq < upto))).all()
        return [_to_stored(r) for r in rows]

    async def append(self, seq: int) -> None:
        async with self.engine.begin() as conn:
            insert = sqlite_insert(TranscriptRow).on_conflict_do_nothing()
            await conn.execute(insert, [_row(SESSION, seq, Message.user("y"), {})])


class OpResult(BaseModel):
    op: str
    path: str
    calls: int
    cpu_ms_per_call: float
    wall_ms_per_call: float
    concurrent_wall_ms_per_call: float


class WindowResult(BaseModel):
    messages: int
    budget_chars: int
    ms_with_role_index: float
    ms_without_role_index: float
    ratio: float


class StoreOpsReport(BaseModel):
    results: list[OpResult]
    cpu_ratio_aiosqlite_vs_database: dict[str, float]
    workspace: list[OpResult] = []
    window: WindowResult | None = None
    machine: dict[str, object]


async def _measure(call: Callable[[int], Awaitable[object]], n: int) -> tuple[float, float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    for i in range(n):
        await call(i)
    cpu_ms = 1000 * (time.process_time() - cpu) / n
    wall_ms = 1000 * (time.perf_counter() - wall) / n
    gate = asyncio.Semaphore(CONCURRENCY)

    async def bounded(i: int) -> None:
        async with gate:
            await call(n + i)

    started = time.perf_counter()
    await asyncio.gather(*(bounded(i) for i in range(n)))
    return cpu_ms, wall_ms, 1000 * (time.perf_counter() - started) / n


async def run(calls: int, say: Callable[[str], None]) -> list[OpResult]:
    results = []
    with tempfile.TemporaryDirectory(prefix="store-ops-") as tmp:
        store = open_store(StoreConfig.sqlite_file(Path(tmp) / "store.db"))
        try:
            await store.append(SESSION, [(i, Message.user("x" * 200), {}) for i in range(ROWS)])
            old = AiosqlitePath(store)
            seqs = itertools.count(ROWS)
            paths: dict[str, dict[str, Callable[[int], Awaitable[object]]]] = {
                "aiosqlite": {
                    "get": lambda i: old.get(i % ROWS),
                    "read 10 rows": lambda i: old.read(ROWS),
                    "append 1 row": lambda i: old.append(next(seqs)),
                },
                "database": {
                    "get": lambda i: store.get(SESSION, i % ROWS),
                    "read 10 rows": lambda i: store.read(SESSION, upto_seq=ROWS),
                    "append 1 row": lambda i: store.append(
                        SESSION, [(next(seqs), Message.user("y"), {})]
                    ),
                },
            }
            for op in paths["aiosqlite"]:
                for path, ops in paths.items():
                    results.append(await _timed(op, path, ops[op], calls, say))
        finally:
            await store.close()
    return results


async def _timed(
    op: str,
    path: str,
    call: Callable[[int], Awaitable[object]],
    calls: int,
    say: Callable[[str], None],
) -> OpResult:
    await _measure(call, 20)  # warm the pools and the statement cache
    cpu_ms, wall_ms, concurrent_ms = await _measure(call, calls)
    result = OpResult(
        op=op,
        path=path,
        calls=calls,
        cpu_ms_per_call=round(cpu_ms, 3),
        wall_ms_per_call=round(wall_ms, 3),
        concurrent_wall_ms_per_call=round(concurrent_ms, 3),
    )
    say(
        f"{op:>16} {path:>9}: CPU {cpu_ms:6.3f} ms, wall {wall_ms:6.3f} ms, "
        f"{CONCURRENCY} in flight {concurrent_ms:6.3f} ms per call"
    )
    return result


async def workspace_ops(calls: int, say: Callable[[str], None]) -> list[OpResult]:
    results = []
    with tempfile.TemporaryDirectory(prefix="workspace-ops-") as tmp:
        store = open_workspace_store(StoreConfig.sqlite_file(Path(tmp) / "store.db"))
        person, model = ChangeSource(actor="bench"), ChangeSource(actor="model", session_id="s")
        try:
            await store.create("w", facts={"title": "bench"})

            proposals = itertools.count()

            async def propose_and_confirm(i: int) -> object:
                workspace, proposal = f"p{i % 50}", f"proposal-{next(proposals)}"
                change = [{"op": "add", "path": f"/k{i}", "value": i}]
                notice = await propose(store, workspace, change, model, proposal_id=proposal)
                decision = SettleInput(
                    proposal_id=proposal,
                    workspace_id=workspace,
                    fingerprint=notice.fingerprint,
                    verdict="confirm",
                    actor="bench",
                    session_id="s",
                )
                out = await settle(store, decision)
                if out.status != "committed":
                    raise RuntimeError(f"proposal {proposal} settled as {out.status}: {out.error}")
                return out

            ops: dict[str, Callable[[int], Awaitable[object]]] = {
                "snapshot": lambda i: store.snapshot("w"),
                "apply 1 draft op": lambda i: store.apply(
                    f"d{i % 50}", "draft", [{"op": "add", "path": "/x", "value": i}], person
                ),
                "propose+confirm": propose_and_confirm,
            }
            for op, call in ops.items():
                results.append(await _timed(op, "workspace", call, calls, say))
        finally:
            await store.close()
    return results


async def windowed_read(messages: int, repeats: int, say: Callable[[str], None]) -> WindowResult:
    budget = 24_000
    with tempfile.TemporaryDirectory(prefix="store-window-") as tmp:
        store = open_store(StoreConfig.sqlite_file(Path(tmp) / "store.db"))
        try:
            rows: list[tuple[int, Message, dict[str, JsonValue]]] = []
            while len(rows) < messages:
                seq = len(rows)
                if seq % 1000 == 999:
                    rows.append((seq, summary_message(f"up to {seq}"), {SUMMARY_META_KEY: seq}))
                else:
                    rows.append((seq, Message.user(f"message {seq} " + "x" * 200), {}))
            await store.append(SESSION, rows)

            async def timed() -> float:
                await window_history(store, SESSION, messages, budget)
                started = time.perf_counter()
                for _ in range(repeats):
                    await window_history(store, SESSION, messages, budget)
                return 1000 * (time.perf_counter() - started) / repeats

            with_index = await timed()
            await store.db.write(lambda conn: conn.execute(text(f"DROP INDEX {ROLE_INDEX}")))
            without = await timed()
        finally:
            await store.close()
    result = WindowResult(
        messages=messages,
        budget_chars=budget,
        ms_with_role_index=round(with_index, 2),
        ms_without_role_index=round(without, 2),
        ratio=round(without / with_index, 1),
    )
    say(
        f"windowed read of {messages:,} messages: {result.ms_with_role_index} ms with the role "
        f"index, {result.ms_without_role_index} ms without ({result.ratio}x)"
    )
    return result


def main(argv: list[str] | None = None) -> StoreOpsReport:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="50 calls per operation")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    calls = 50 if args.quick else args.calls
    if calls < 1:
        parser.error("BAD_WORKLOAD: --calls must be >= 1")
    say = lambda line: print(line, flush=True)  # noqa: E731
    results = asyncio.run(run(calls, say))
    workspace = asyncio.run(workspace_ops(calls, say))
    window = asyncio.run(
        windowed_read(2_000 if args.quick else 20_000, 5 if args.quick else 20, say)
    )
    by = {(r.op, r.path): r for r in results}
    ratios = {
        op: round(by[(op, "aiosqlite")].cpu_ms_per_call / by[(op, "database")].cpu_ms_per_call, 2)
        for op, _ in by
    }
    report = StoreOpsReport(
        results=results,
        cpu_ratio_aiosqlite_vs_database=ratios,
        workspace=workspace,
        window=window,
        machine=machine(),
    )
    print(f"CPU per call, aiosqlite / database: {ratios}")
    publish(report, args.output)
    return report


if __name__ == "__main__":
    main()
