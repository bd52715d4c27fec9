"""``finalize_when_done``'s rule (``core/request_left``) against BFCL's ground truth, both
ways, with no model: for each entry of the single-turn AST categories, BFCL's first
possible answer is played call by call, and the rule is asked after each.

* **lost step**: an entry needing several calls that the rule calls done before the last
  one (the answer request would come while a call is still due): the error to avoid.
* **done at once**: the rule calls the entry done after its last call (the model is asked
  for the answer instead of being offered the tools again, where the local model repeats
  its call): the request saved.

The order of the ground truth's calls stands in for the model's; a model that makes the
calls in another order may meet the rule at another point. Needs BFCL's data (``make
bfcl``; the dev install has it).

    .venv/bin/python -m bench.request_left_bfcl [--categories simple_python,parallel]
        [--quick]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from pydantic import BaseModel

from bench.harness import machine, publish
from durable_loop.core.request_left import CallMade, request_left
from durable_loop.evals.bfcl.answers import answer_calls
from durable_loop.evals.bfcl.entries import BfclEntry, entries
from durable_loop.evals.bfcl.package import load_bfcl
from durable_loop.evals.bfcl.tools import entry_specs

DEFAULT_OUTPUT = Path(__file__).parent / "results" / "request_left_bfcl.json"
CATEGORIES = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
)
QUICK_ENTRIES = 20


class CategoryRule(BaseModel):
    category: str
    entries: int
    multi_call: int
    lost_step: int
    lost_step_ids: list[str]
    done_at_once: int
    done_at_once_share: float


class RequestLeftReport(BaseModel):
    benchmark: str = "request_left_bfcl"
    what: str = __doc__.split("\n\n")[0] if __doc__ else ""
    machine: dict[str, object]
    seconds: float
    categories: list[CategoryRule]


def judge_entry(entry: BfclEntry, calls: list[CallMade], offered: list[str]) -> tuple[bool, bool]:
    """(lost a step, done at once) for one entry played along ``calls``."""
    lost = any(not request_left(entry.user_text, calls[:k], offered) for k in range(1, len(calls)))
    return lost, not request_left(entry.user_text, calls, offered)


def category_rule(category: str, limit: int | None) -> CategoryRule:
    bfcl = load_bfcl()
    chosen = [e for e in entries(bfcl, category) if e.answer][:limit]
    lost_ids: list[str] = []
    multi = done = 0
    for entry in chosen:
        specs = entry_specs(bfcl, entry)
        calls = answer_calls(entry, specs)
        lost, at_once = judge_entry(entry, calls, [s.name for s in specs])
        multi += len(calls) > 1
        done += at_once
        if lost:
            lost_ids.append(entry.id)
    return CategoryRule(
        category=category,
        entries=len(chosen),
        multi_call=multi,
        lost_step=len(lost_ids),
        lost_step_ids=lost_ids,
        done_at_once=done,
        done_at_once_share=round(done / len(chosen), 3) if chosen else 0.0,
    )


def main(argv: list[str] | None = None) -> RequestLeftReport:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--categories", default=",".join(CATEGORIES))
    parser.add_argument("--quick", action="store_true", help=f"first {QUICK_ENTRIES} per category")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    started = time.monotonic()
    rows = [
        category_rule(c, QUICK_ENTRIES if args.quick else None) for c in args.categories.split(",")
    ]
    print(
        f"{'category':24} {'entries':>7} {'multi-call':>10} {'lost step':>10} {'done at once':>13}"
    )
    for r in rows:
        lost = f"{r.lost_step} ({r.lost_step / r.multi_call:.1%})" if r.multi_call else "0"
        done = f"{r.done_at_once} ({r.done_at_once_share:.0%})"
        print(f"{r.category:24} {r.entries:7} {r.multi_call:10} {lost:>10} {done:>13}")
    report = RequestLeftReport(
        machine=machine(), seconds=round(time.monotonic() - started, 1), categories=rows
    )
    publish(report, args.output)
    return report


if __name__ == "__main__":
    main()
