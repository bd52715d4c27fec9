"""Session start cost: the worker CPU of a session's first workflow task and the worker
memory each cached session holds, for several workflow sandbox configurations side by side
in one run, at a couple of ``max_cached_workflows`` values.

For every (configuration, cache size) a fresh worker process is started (this module with
``--worker``: durable-loop's plugin, its activities, a SQLite store) on one embedded dev
server; N sessions are each started by update-with-start with one message, answered in
text by a zero-latency scripted endpoint. Then:

* **first workflow task CPU**: the worker's workflow runner is wrapped in a timer that
  reads ``time.thread_time()`` around creating the workflow instance (where the sandbox
  imports the workflow modules) and around its first activation, in the thread that runs
  them. Thread CPU time counts only this work, not other threads or processes, nor the time
  spent waiting for the GIL or a core, so it stays accurate on a loaded machine (wall time
  would not). What it leaves out (the SDK core and the asyncio side of the task) is the
  same for every configuration.
* **memory per cached session**: the worker's RSS (from /proc) after N sessions minus its
  RSS after a few warm-up sessions, divided by the sessions the cache holds
  (``min(N, cache)``). A fresh process per run keeps one run's freed memory from hiding the
  next run's growth.
* **worker CPU per session**: the worker process's CPU seconds over the N sessions (from
  /proc: workflow tasks, activities, SDK core) divided by N.

Configurations: ``sdk_default`` (``SandboxRestrictions.default``), ``core_passthrough``
(durable-loop's plugin before this benchmark: ``durable_loop.core`` passed through),
``durable_loop`` (the plugin now: :mod:`durable_loop.worker.sandbox`), ``all_passthrough``
(``sandbox_passthrough=True``: all of durable_loop passed through, workflow modules too)
and ``unsandboxed`` (no sandbox at all: the floor).

    .venv/bin/python -m bench.session_start_cost [--sessions 200] [--caches 50,200]
        [--configs sdk_default,core_passthrough,durable_loop,...] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from bench.harness import publish
from bench.start_cost_measure import SETTLE_S, Plan, run
from bench.start_cost_report import AFTER, BEFORE, StartCostReport, report_of
from bench.start_cost_worker import CONFIGS, probe_details, serve

__all__ = ["AFTER", "BEFORE", "main", "probe_details"]

DEFAULT_OUTPUT = Path(__file__).parent / "results" / "session_start_cost.json"


def main(argv: list[str] | None = None) -> StartCostReport | None:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.worker:
        asyncio.run(serve(args.worker, args.address, args.queue, args.db, args.cache))
        return None
    plan = _plan(args, parser)
    started = time.perf_counter()
    runs = asyncio.run(run(plan))
    report = report_of(plan, runs, wall_s=round(time.perf_counter() - started, 1))
    publish(report, args.output)
    return report


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--caches", default="20,100,300", help="max_cached_workflows values")
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument(
        "--quick", action="store_true", help="8 sessions, caches 4 and 8, before and after"
    )
    parser.add_argument(
        "--trace-heap",
        action="store_true",
        help="run the workers under tracemalloc to split RSS into Python heap and the rest "
        "(CPU figures are then inflated)",
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--worker", choices=CONFIGS, help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    parser.add_argument("--queue", help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--cache", type=int, help=argparse.SUPPRESS)
    return parser


def _plan(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Plan:
    """The run the flags ask for; a coded usage error for flags that make no slope."""
    try:
        caches = [int(c) for c in args.caches.split(",")]
    except ValueError:
        parser.error(f"BAD_CACHES: --caches must be comma-separated integers, got {args.caches!r}")
    configs = [c for c in args.configs.split(",") if c]
    unknown = set(configs) - set(CONFIGS)
    if unknown:
        parser.error(f"BAD_CONFIGS: unknown {sorted(unknown)}; known: {list(CONFIGS)}")
    sessions = args.sessions
    if args.quick:
        sessions, caches, configs = 8, [4, 8], [BEFORE, AFTER]
    if sessions < 2 or min(caches) < 1 or len(set(caches)) < 2:
        parser.error(
            "BAD_ARGUMENT: --sessions must be at least 2, every cache positive, and there "
            "must be two cache sizes or more (memory per session is a slope)"
        )
    return Plan(
        sessions=sessions,
        caches=caches,
        configs=configs,
        settle_s=0.5 if args.quick else SETTLE_S,
        trace_heap=args.trace_heap,
    )


if __name__ == "__main__":
    main()
