"""Run one Python block of the docs: ``python -m tests.docs.python_block SPEC.json``.

The spec holds the block (``source``), what it is ``given`` (run first) and where it is
(``where``, for tracebacks). Top-level ``await`` works as in an asyncio REPL; a block
without one runs as a plain script (it may call ``asyncio.run`` itself).
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import sys
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


if __name__ == "__main__":
    main(sys.argv[1])
