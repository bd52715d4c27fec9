"""Cost of one transcript-store call on SQLite: through aiosqlite with statements built per
call (what the store did before) vs ``TranscriptStore`` now (statements built once, the
sqlite3 driver in a thread pool via ``store.database.Database``), side by side in one run
on the same file.

Each operation runs N times one after another, then N times with 64 in flight; the
process's CPU time and the wall time per call are reported for both paths.

    .venv/bin/python -m bench.store_ops [--calls 1000] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncEngine

from bench.harness import machine
from durable_loop.activities.store import StoreConfig, TranscriptStore, open_store
from durable_loop.activities.store.transcript import TRANSCRIPT, TranscriptRow, _row, _to_stored
from durable_loop.toolcalling.messages import Message

DEFAULT_OUTPUT = Path(__file__).parent / "results" / "store_ops.json"
CONCURRENCY = 64
SESSION = "bench"
ROWS = 10


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


class StoreOpsReport(BaseModel):
    results: list[OpResult]
    cpu_ratio_aiosqlite_vs_database: dict[str, float]
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
            base = {"aiosqlite": 1_000_000, "database": 2_000_000}
            paths: dict[str, dict[str, Callable[[int], Awaitable[object]]]] = {
                "aiosqlite": {
                    "get": lambda i: old.get(i % ROWS),
                    "read 10 rows": lambda i: old.read(ROWS),
                    "append 1 row": lambda i: old.append(base["aiosqlite"] + i),
                },
                "database": {
                    "get": lambda i: store.get(SESSION, i % ROWS),
                    "read 10 rows": lambda i: store.read(SESSION, upto_seq=ROWS),
                    "append 1 row": lambda i: store.append(
                        SESSION, [(base["database"] + i, Message.user("y"), {})]
                    ),
                },
            }
            for op in paths["aiosqlite"]:
                for path, ops in paths.items():
                    await _measure(ops[op], 20)  # warm the pools and the statement cache
                    base[path] += 100
                    cpu_ms, wall_ms, concurrent_ms = await _measure(ops[op], calls)
                    base[path] += 2 * calls + 100
                    result = OpResult(
                        op=op,
                        path=path,
                        calls=calls,
                        cpu_ms_per_call=round(cpu_ms, 3),
                        wall_ms_per_call=round(wall_ms, 3),
                        concurrent_wall_ms_per_call=round(concurrent_ms, 3),
                    )
                    say(
                        f"{op:>13} {path:>9}: CPU {result.cpu_ms_per_call:6.3f} ms, wall "
                        f"{result.wall_ms_per_call:6.3f} ms, {CONCURRENCY} in flight "
                        f"{result.concurrent_wall_ms_per_call:6.3f} ms per call"
                    )
                    results.append(result)
        finally:
            await store.close()
    return results


def main(argv: list[str] | None = None) -> StoreOpsReport:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="50 calls per operation")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    calls = 50 if args.quick else args.calls
    if calls < 1:
        parser.error("BAD_WORKLOAD: --calls must be >= 1")
    results = asyncio.run(run(calls, lambda line: print(line, flush=True)))
    by = {(r.op, r.path): r for r in results}
    ratios = {
        op: round(by[(op, "aiosqlite")].cpu_ms_per_call / by[(op, "database")].cpu_ms_per_call, 2)
        for op, _ in by
    }
    report = StoreOpsReport(
        results=results, cpu_ratio_aiosqlite_vs_database=ratios, machine=machine()
    )
    print(f"CPU per call, aiosqlite / database: {ratios}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(report.model_dump_json(indent=2) + "\n")
    print(f"written to {args.output}")
    sys.stdout.flush()
    print(report.model_dump_json(), flush=True)
    return report


if __name__ == "__main__":
    main()
