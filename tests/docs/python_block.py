"""Run one Python block of the docs: ``python -m tests.docs.python_block SPEC.json``.

The spec holds the block (``source``), what it is ``given`` (run first) and where it is
(``where``, for tracebacks). Top-level ``await`` works as in an asyncio REPL; a block
without one runs as a plain script (it may call ``asyncio.run`` itself).

Once the block has run, the process exits without interpreter finalization, as the
``durable-loop`` console script does: the Temporal client's Rust threads can crash a
finalizing interpreter (SIGABRT or SIGSEGV, temporalio/sdk-python#300) after the example's
work is done, and that crash is the SDK's, not the example's.
"""

from __future__ import annotations

import ast
import asyncio
import atexit
import inspect
import json
import os
import sys
import traceback
from pathlib import Path
from types import CodeType


def main(spec_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    codes = [
        compile(spec["given"], "<given>", "exec", flags=flags),
        compile(spec["source"], spec["where"], "exec", flags=flags),
    ]
    namespace: dict[str, object] = {"__name__": "__main__"}
    if any(code.co_flags & inspect.CO_COROUTINE for code in codes):
        asyncio.run(run_all(codes, namespace))
    else:
        for code in codes:
            exec(code, namespace)


async def run_all(codes: list[CodeType], namespace: dict[str, object]) -> None:
    for code in codes:
        result = eval(code, namespace)
        if inspect.iscoroutine(result):
            await result


def exit_now(code: int) -> None:
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    try:
        main(sys.argv[1])
    except SystemExit as done:
        exit_now(done.code if isinstance(done.code, int) else 1 if done.code else 0)
    except BaseException:
        traceback.print_exc()
        exit_now(1)
    exit_now(0)
