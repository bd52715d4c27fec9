"""Where BFCL sessions run: one Temporal environment and store for the whole run, and one
worker per batch of entries (its tools are those entries' functions): the evals'
:class:`~durable_loop.evals.harness.EvalEnvironment`, named ``bfcl``."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager

from durable_loop.evals.harness import EvalEnvironment, eval_environment


def bfcl_environment(
    kind: str, environ: Mapping[str, str]
) -> AbstractAsyncContextManager[EvalEnvironment]:
    return eval_environment(kind, environ, name="bfcl")
