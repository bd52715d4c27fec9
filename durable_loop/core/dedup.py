"""Session-wide deduplication of tool calls, decided from workflow state.

A tool declared ``dedupe=True`` runs once per exact call (name + sha256 of canonical JSON
arguments) in a session: a repeat gets the recorded result, marked ``deduplicated``,
without executing. The map lives in the workflow (and crosses continue-as-new in
``CarriedState.dedup``), so a worker restart cannot make a tool run twice. Only
successful results are recorded: a failed call may be retried.
"""

from __future__ import annotations

from durable_loop.core.guards import CallDecision, TurnPlan, call_key
from durable_loop.core.tools import ToolSpec

DEDUP_KEPT = 512


def record_result(dedup: dict[str, int], name: str, args_sha256: str, result_seq: int) -> None:
    """Remember a successful result; the oldest entries go once ``DEDUP_KEPT`` is reached."""
    key = call_key(name, args_sha256)
    dedup.pop(key, None)
    dedup[key] = result_seq
    while len(dedup) > DEDUP_KEPT:
        dedup.pop(next(iter(dedup)))


def dedupe_plan(
    plan: TurnPlan, specs: dict[str, ToolSpec], dedup: dict[str, int]
) -> tuple[TurnPlan, set[int]]:
    """Turn executions of recorded calls into reuses; return the plan and their result seqs."""
    decisions: list[CallDecision] = []
    deduplicated: set[int] = set()
    for decision in plan.decisions:
        call = decision.call
        spec = specs.get(call.name)
        recorded = dedup.get(call_key(call.name, call.args_sha256))
        if (
            decision.action == "execute"
            and spec is not None
            and spec.dedupe
            and recorded is not None
        ):
            decision = decision.model_copy(update={"action": "reuse", "reuse_seq": recorded})
            deduplicated.add(decision.result_seq)
        decisions.append(decision)
    return plan.model_copy(update={"decisions": decisions}), deduplicated
