"""The patches a run could first ask right after a local activity, asked as the run starts
instead (patch ``patches-at-run-start``).

temporalio 1.32 to 1.35 (its core): when a Query is answered while a local activity's
result is pending, the workflow task is completed with the activity's marker before the
workflow has seen the result. A ``workflow.patched`` first asked right after that local
activity then records its marker one workflow task later than the activity, and a replay,
which knows only the patch markers of the task it is in, answers False: TMPRL1100, and the
session's workflow tasks fail (the live worker logged it in every such session). The
approval page and the CLI poll the status Query. Measured on the dev server with four
pollers (docs/versioning.md, ``bench/replay_under_queries.py``): 7 of 25 idle sessions on a
versioned worker, 6 of 25 sessions with a local tool and 5 of 25 with a repaired held call
failed replay; without polling, none; with this patch, none.

The session's local activities are the catalog as a run starts, the transcript writes, local
tools and reading held calls. The patches listed here can be asked first after one of them
(an audit of every ``patched`` call site; the others are asked as a run starts already
(``RunControl.start``, ``ApprovalBook.start``, ``ProposalBook.start``), in a Signal or Update
handler, or after a regular activity such as the LLM turn). Asked in a run's first
activation, before it starts anything, their markers land in the first workflow task, and
the SDK keeps each answer for the rest of the run, so the call sites deeper in the code get
it without a marker of their own. A run that started before this patch answers False to it
and keeps asking each patch where it always did.

A new patch whose first ask can follow a local activity goes into
:data:`RUN_START_PATCHES`; moving an existing ``patched`` call to another workflow task
would move its marker for the runs already recorded, which is why this one gate does it.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.recoveries import (
        continue_after_repeat,
        finalize_after_repeat,
        finalize_when_done,
    )

from durable_loop.workflows import argument_repair, model_routing, session_upgrade

PATCH_ID = "patches-at-run-start"

RUN_START_PATCHES: tuple[str, ...] = (
    session_upgrade.UPGRADE_PATCH,
    finalize_when_done.PATCH_ID,
    finalize_after_repeat.PATCH_ID,
    continue_after_repeat.PATCH_ID,
    continue_after_repeat.NARROWED_PATCH_ID,
    argument_repair.PATCH_ID,
    model_routing.BREAKER_PATCH,
    model_routing.BUDGET_TOOLS_PATCH,
)
"""``upgrade-on-continue-as-new``: an idle run asks it after loading the catalog, a run
after the transcript write that ends its message. The recoveries after tool results
(``finalize-when-done``, ``finalize-after-repeat``, ``continue-after-repeat``, its narrowing)
and ``argument-repair``: after a local tool, or after reading held calls. The fallback
circuit (``fallback-circuit-breaker``) before an LLM turn that follows a local tool or the
catalog, and ``budget-crossing-turn-runs-no-tools`` after the router pipeline's transcript
write."""


def ask_patches_at_run_start() -> None:
    """First thing in a workflow's run: the listed patches asked now when this run records
    them here, none when it started before (a replay of an older run answers False)."""
    if workflow.patched(PATCH_ID):
        for patch_id in RUN_START_PATCHES:
            workflow.patched(patch_id)
