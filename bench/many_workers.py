"""Throughput with one, two and three worker processes on one task queue (the embedded dev
server, one store), side by side in one run; the CPU of every process is read from /proc
so the resource that binds shows.

The load is bench.throughput's: N concurrent sessions, each message one tool turn and a
text turn against a zero-latency scripted endpoint and a no-op tool. The store is SQLite
in a temp dir unless ``--db-url`` names PostgreSQL (then the PostgreSQL server processes'
CPU is counted too).

    .venv/bin/python -m bench.many_workers [--workers 1,2,3] [--sessions 100]
        [--messages 3] [--db-url postgresql://...] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
import uuid
from pathlib import Path

from pydantic import BaseModel
from temporalio.client import Client

from bench.harness import cpu_s, dev_server, machine, publish, server_address, server_pid
from bench.throughput import TOOLS, drive, load_clients
from durable_loop.chaos.processes import WorkerProcess
from durable_loop.client.sessions import SessionClient
from durable_loop.store import StoreConfig
from durable_loop.testing import ScriptedLLM

DEFAULT_OUTPUT = Path(__file__).parent / "results" / "many_workers.json"
BINDS_AT = 0.85
"""Share of all cores busy above which the machine's CPU is what binds."""


class Level(BaseModel):
    workers: int
    sessions: int
    messages_per_session: int
    turns: int
    failed_messages: int
    wall_s: float
    turns_per_s: float
    cpu_s: dict[str, float]
    """CPU seconds during the level: each worker, the dev server, PostgreSQL, this driver."""
    cpu_busy: float
    """This benchmark's processes' CPU seconds over wall time times cores (1.0: all cores)."""
    machine_busy: float
    """Every process on the machine, from /proc/stat: other jobs' load shows here."""
    binds: str
    errors: list[str] = []


class ManyWorkersReport(BaseModel):
    turn: str
    store: str
    levels: list[Level]
    ratio_vs_one_worker: dict[int, float]
    machine: dict[str, object]
    wall_s: float


def postgres_pids() -> list[int]:
    """The PostgreSQL server processes on this machine (their CPU is the store's cost)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() in ("postgres", "postmaster"):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def cpu_by_pid(pids: list[int]) -> dict[int, float]:
    out = {}
    for pid in pids:
        try:
            out[pid] = cpu_s(pid)
        except OSError:  # a backend that ended meanwhile
            continue
    return out


def cpu_between(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU the processes used between two samples: a process that ended counts nothing
    more, one that started counts all it used."""
    return sum(used - before.get(pid, 0.0) for pid, used in after.items())


def machine_jiffies() -> tuple[int, int]:
    """(busy, total) CPU time of the whole machine, every process, from /proc/stat."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def binding(cpu: dict[str, float], ours: float, machine_busy: float) -> str:
    heaviest = max(cpu, key=lambda name: cpu[name])
    if machine_busy >= BINDS_AT:
        return (
            f"machine CPU ({machine_busy:.0%} of all cores busy, {ours:.0%} by this benchmark's "
            f"processes, the rest by other jobs; most used here by {heaviest})"
        )
    return f"not CPU ({machine_busy:.0%} busy): waits on the server's task dispatch and round trips"


async def measure(
    address: str,
    llm: ScriptedLLM,
    workdir: Path,
    db_url: str | None,
    workers: int,
    count: int,
    messages: int,
    clients: list[Client],
    server: int | None,
) -> Level:
    queue = f"mw-{workers}-{uuid.uuid4().hex[:6]}"
    url = db_url or StoreConfig.sqlite_file(workdir / f"{queue}.db").url
    procs = [
        WorkerProcess(address, queue, url, workdir, tools=TOOLS, name=f"w{i}")
        for i in range(workers)
    ]
    await asyncio.gather(*(p.start() for p in procs))
    sessions = [SessionClient(c, task_queue=queue, search_attributes=False) for c in clients]

    def sample() -> dict[str, float]:
        cpu = {f"worker{i + 1}": cpu_s(p.pid) for i, p in enumerate(procs)}
        cpu["server"] = cpu_s(server) if server else 0.0
        cpu["driver"] = time.process_time()
        return cpu

    try:
        before, pg_before, jiffies_before = sample(), cpu_by_pid(postgres_pids()), machine_jiffies()
        started = time.perf_counter()
        completed, errors = await drive(sessions, llm, count, messages, queue)
        wall = time.perf_counter() - started
        after, pg_after, jiffies_after = sample(), cpu_by_pid(postgres_pids()), machine_jiffies()
    finally:
        await asyncio.gather(*(asyncio.to_thread(p.stop) for p in procs))
    cpu = {name: round(after[name] - before[name], 2) for name in before}
    if db_url:
        cpu["postgresql"] = round(cpu_between(pg_before, pg_after), 2)
    busy = sum(cpu.values()) / (wall * (os.cpu_count() or 1))
    machine_busy = (jiffies_after[0] - jiffies_before[0]) / max(
        1, jiffies_after[1] - jiffies_before[1]
    )
    turns = completed * 2
    return Level(
        workers=workers,
        sessions=count,
        messages_per_session=messages,
        turns=turns,
        failed_messages=count * messages - completed,
        wall_s=round(wall, 2),
        turns_per_s=round(turns / wall, 1),
        cpu_s=cpu,
        cpu_busy=round(busy, 2),
        machine_busy=round(machine_busy, 2),
        binds=binding(cpu, busy, machine_busy),
        errors=errors,
    )


async def run(args: argparse.Namespace) -> list[Level]:
    levels = []
    with tempfile.TemporaryDirectory(prefix="many-workers-") as tmp, ScriptedLLM() as llm:
        async with dev_server() as env:
            clients = await load_clients(env, args.sessions)
            server = server_pid(env)
            for workers in args.workers:
                level = await measure(
                    server_address(env),
                    llm,
                    Path(tmp),
                    args.db_url,
                    workers,
                    args.sessions,
                    args.messages,
                    clients,
                    server,
                )
                print(
                    f"{workers} worker(s), {level.sessions} sessions x {level.messages_per_session}"
                    f" messages: {level.turns_per_s:7.1f} turns/s in {level.wall_s:.1f}s; "
                    f"CPU s {level.cpu_s}; {level.binds}; {level.failed_messages} failed",
                    flush=True,
                )
                levels.append(level)
    return levels


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="1,2,3", help="comma-separated worker counts")
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--messages", type=int, default=3, help="messages per session")
    parser.add_argument("--db-url", help="the workers' store (default: SQLite in a temp dir)")
    parser.add_argument("--quick", action="store_true", help="1 and 2 workers, 4 sessions")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    try:
        args.workers = [int(w) for w in args.workers.split(",")]
    except ValueError as err:
        parser.error(f"BAD_ARGUMENT: {err}")
    if not args.workers or min(args.workers) < 1 or args.sessions < 1 or args.messages < 1:
        parser.error("BAD_ARGUMENT: workers, sessions and messages must be positive")
    if args.quick:
        args.workers, args.sessions, args.messages = [1, 2], 4, 1
    return args


def main(argv: list[str] | None = None) -> ManyWorkersReport:
    args = parse_args(argv)
    started = time.perf_counter()
    levels = asyncio.run(run(args))
    by_workers = {level.workers: level.turns_per_s for level in levels}
    base = by_workers.get(1)
    report = ManyWorkersReport(
        turn="one LLM call plus the tool call it asked for; a message = 1 tool turn + 1 text turn",
        store="postgresql" if args.db_url else "sqlite",
        levels=levels,
        ratio_vs_one_worker={n: round(tps / base, 2) for n, tps in by_workers.items()}
        if base
        else {},
        machine=machine(),
        wall_s=round(time.perf_counter() - started, 1),
    )
    print(f"turns/s relative to one worker: {report.ratio_vs_one_worker}")
    publish(report, args.output)
    return report


if __name__ == "__main__":
    main()
