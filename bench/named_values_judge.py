"""Can the model itself tell a value from knowledge from a guess? Asked one yes/no
question, over HTTP, about calls of a tool the person named whose required values nobody
said (``core/said_values`` without its named-tool exemption).

* **knowledge**: BFCL's correct first call in ``simple_python`` and ``multiple`` (a deck's
  52 cards, a company's ticker): a judge should keep it.
* **guess**: the model's own first call on a sample of ``irrelevance`` (a region
  "worldwide", a player BFCL never named): a judge should refuse it.

The named-tool exemption lets both through today, so irrelevance loses the guesses; taking
it away loses the knowledge. For each wording the report gives the temperature-0 answer and
P(yes) from the first token's ``top_logprobs``, with its AUC and the trade at each guess's
P(yes) (guesses refused against knowledge lost when that is the cut). Needs BFCL's data
(``make bfcl``) and an OpenAI-compatible server that returns logprobs (``durable-loop
local-llm``).

    .venv/bin/python -m bench.named_values_judge [--base-url URL] [--irrelevance 50]
        [--seed 1] [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, JsonValue

from bench.harness import machine, publish
from durable_loop.core.messages import Message
from durable_loop.core.plan import PromptPlan
from durable_loop.core.providers.base import arguments_object, loads_lenient
from durable_loop.core.providers.openai_compat import OpenAICompatAdapter
from durable_loop.core.said_values import Heard, unsaid_arguments
from durable_loop.core.tools import ToolSpec
from durable_loop.core.transforms.text_calls import parse_json_calls
from durable_loop.evals.bfcl.answers import answer_calls
from durable_loop.evals.bfcl.entries import BfclEntry, entries, sample
from durable_loop.evals.bfcl.package import load_bfcl
from durable_loop.evals.bfcl.tools import entry_specs

DEFAULT_OUTPUT = Path(__file__).parent / "results" / "named_values_judge.json"
DEFAULT_BASE_URL = "http://127.0.0.1:8091/v1"
KNOWLEDGE_CATEGORIES = ("simple_python", "multiple")
QUICK_CASES = 4
SYSTEM = "Answer with one word: yes or no."
ADAPTER = OpenAICompatAdapter()


class Case(BaseModel):
    entry: str
    kind: str
    """``knowledge`` (BFCL's correct call) or ``guess`` (the model's call on irrelevance)."""
    tool: str
    unsaid: dict[str, Any]
    request: str
    description: str


class Verdict(BaseModel):
    entry: str
    kind: str
    judge: str
    answer: str
    p_yes: float


class JudgeSummary(BaseModel):
    judge: str
    wording: str
    knowledge_kept: str
    guesses_refused: str
    auc: float
    cuts: list[str]
    """At each guess's P(yes) as the cut: guesses refused, knowledge lost."""


class JudgeReport(BaseModel):
    benchmark: str = "named_values_judge"
    what: str = __doc__.split("\n\n")[0] if __doc__ else ""
    machine: dict[str, object]
    base_url: str
    irrelevance_sample: int
    seed: int
    seconds: float
    cases: list[Case]
    judges: list[JudgeSummary]
    verdicts: list[Verdict]


def _values(case: Case) -> str:
    return ", ".join(f"{name}={json.dumps(value)}" for name, value in case.unsaid.items())


def fits(case: Case) -> str:
    return (
        f'Request: "{case.request}"\n\nTool: {case.tool}: {case.description}\n\n'
        "Does running this tool answer the request? Answer yes or no."
    )


def known(case: Case) -> str:
    return (
        f'Request: "{case.request}"\n\nA call to {case.tool} uses {_values(case)}, which the '
        "request does not state.\n\nDoes the request imply the value as a known fact (yes), "
        "or is it a guess or a placeholder (no)? Answer yes or no."
    )


def given(case: Case) -> str:
    return (
        f'Request: "{case.request}"\n\nValues: {_values(case)}\n\nDid the person give these '
        "values, directly or by naming something that fixes them? Answer yes or no."
    )


JUDGES: dict[str, Callable[[Case], str]] = {j.__name__: j for j in (fits, known, given)}

BLANKS = Case(
    entry="",
    kind="",
    tool="{tool}",
    unsaid={"{name}": "{value}"},
    request="{request}",
    description="{description}",
)
"""A case whose every field is its own blank: a judge's wording for the report."""


def named_unsaid(entry: BfclEntry, spec: ToolSpec, args: Any, names: list[str]) -> dict[str, Any]:
    """The call's required values nobody said, when the person named its tool."""
    heard = Heard([entry.system_prompt or "", entry.user_text], asked=[entry.user_text])
    if not isinstance(args, dict) or not heard.names_tool(spec.name, names):
        return {}
    return {name: args[name] for name in unsaid_arguments(args, spec.parameters, heard)}


def case_of(
    entry: BfclEntry, specs: list[ToolSpec], call: tuple[str, Any], kind: str
) -> Case | None:
    spec = next((s for s in specs if s.name == call[0]), None)
    unsaid = named_unsaid(entry, spec, call[1], [s.name for s in specs]) if spec else {}
    if spec is None or not unsaid:
        return None
    description = spec.description.split(" Note that")[0]
    return Case(
        entry=entry.id,
        kind=kind,
        tool=spec.name,
        unsaid=unsaid,
        request=entry.user_text,
        description=description,
    )


def knowledge_cases(limit: int | None) -> list[Case]:
    return list(itertools.islice(_knowledge_cases(), limit))


def _knowledge_cases() -> Iterator[Case]:
    bfcl = load_bfcl()
    for category in KNOWLEDGE_CATEGORIES:
        for entry in entries(bfcl, category):
            specs = entry_specs(bfcl, entry)
            calls = answer_calls(entry, specs)
            case = case_of(entry, specs, calls[0], "knowledge") if calls else None
            if case is not None:
                yield case


@dataclass(frozen=True)
class Endpoint:
    http: httpx.Client
    base_url: str
    model: str

    def completion(self, body: dict[str, JsonValue]) -> str:
        """The raw text of a chat completion at temperature 0."""
        sent = {"model": self.model, "temperature": 0, **body}
        reply = self.http.post(f"{self.base_url}/chat/completions", json=sent)
        reply.raise_for_status()
        return reply.text

    def choice(self, body: dict[str, JsonValue]) -> dict[str, Any]:
        first: dict[str, Any] = json.loads(self.completion(body))["choices"][0]
        return first


def first_call(
    endpoint: Endpoint, entry: BfclEntry, specs: list[ToolSpec]
) -> tuple[str, dict[str, JsonValue]] | None:
    """The model's first call for ``entry``, asked as the loop asks (the OpenAI-compatible
    adapter's request and parser), native or written as JSON text (the text-call
    transform's parser)."""
    system = [Message(role="system", content=entry.system_prompt)] if entry.system_prompt else []
    plan = PromptPlan(
        model=endpoint.model,
        session_id=entry.id,
        upto_seq=0,
        tools=specs,
        llm_options={"max_tokens": 512},
    )
    request = ADAPTER.build_request(plan, [*system, Message(role="user", content=entry.user_text)])
    raw = endpoint.completion(request.body)
    message = ADAPTER.parse_response(loads_lenient(raw), raw).message
    calls = (
        message.tool_calls or parse_json_calls(message.content or "", [s.name for s in specs])[0]
    )
    return (calls[0].name, arguments_object(calls[0].arguments)) if calls else None


def guess_cases(endpoint: Endpoint, n: int, seed: int) -> Iterator[Case]:
    bfcl = load_bfcl()
    for entry in sample(entries(bfcl, "irrelevance"), n, seed):
        specs = entry_specs(bfcl, entry)
        call = first_call(endpoint, entry, specs)
        case = case_of(entry, specs, call, "guess") if call else None
        if case is not None:
            yield case


def verdict(endpoint: Endpoint, case: Case, judge: str) -> Verdict:
    """The judge's temperature-0 answer and P(yes) among the first token's yes and no."""
    choice = endpoint.choice(
        {
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": JUDGES[judge](case)},
            ],
            "max_tokens": 1,
            "logprobs": True,
            "top_logprobs": 10,
        }
    )
    top = choice["logprobs"]["content"][0]["top_logprobs"]
    p = {
        word: sum(math.exp(t["logprob"]) for t in top if t["token"].strip().lower() == word)
        for word in ("yes", "no")
    }
    p_yes = p["yes"] / (p["yes"] + p["no"]) if p["yes"] + p["no"] else 0.5
    answer = (choice["message"].get("content") or "").strip().lower()
    return Verdict(
        entry=case.entry, kind=case.kind, judge=judge, answer=answer, p_yes=round(p_yes, 3)
    )


def summary(judge: str, verdicts: list[Verdict]) -> JudgeSummary:
    kept = [v for v in verdicts if v.kind == "knowledge"]
    guesses = [v for v in verdicts if v.kind == "guess"]
    pairs = [(k.p_yes > g.p_yes) + 0.5 * (k.p_yes == g.p_yes) for k in kept for g in guesses]
    cuts = [
        f"P(yes) <= {cut}: guesses refused {sum(g.p_yes <= cut for g in guesses)}/{len(guesses)}, "
        f"knowledge lost {sum(k.p_yes <= cut for k in kept)}/{len(kept)}"
        for cut in sorted({g.p_yes for g in guesses})
    ]
    return JudgeSummary(
        judge=judge,
        wording=JUDGES[judge](BLANKS),
        knowledge_kept=f"{sum(v.answer.startswith('yes') for v in kept)}/{len(kept)}",
        guesses_refused=f"{sum(v.answer.startswith('no') for v in guesses)}/{len(guesses)}",
        auc=round(sum(pairs) / len(pairs), 3) if pairs else 0.0,
        cuts=cuts,
    )


def main(argv: list[str] | None = None) -> JudgeReport:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--base-url", default=DEFAULT_BASE_URL)
    parser.add_argument("--model", default="local", help="the model name sent")
    parser.add_argument("--irrelevance", type=int, default=50, help="irrelevance entries sampled")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"first {QUICK_CASES} knowledge cases, {QUICK_CASES} irrelevance entries",
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    irrelevance = QUICK_CASES if args.quick else args.irrelevance
    started = time.monotonic()
    with httpx.Client(timeout=600) as http:
        endpoint = Endpoint(http, args.base_url, args.model)
        cases = [
            *knowledge_cases(QUICK_CASES if args.quick else None),
            *guess_cases(endpoint, irrelevance, args.seed),
        ]
        verdicts = []
        for n, case in enumerate(cases, 1):
            asked = [verdict(endpoint, case, judge) for judge in JUDGES]
            verdicts += asked
            p_yes = ", ".join(f"{v.judge} {v.p_yes}" for v in asked)
            print(f"[{n}/{len(cases)}] {case.kind:9} {case.entry}: P(yes) {p_yes}", flush=True)
    judges = [summary(j, [v for v in verdicts if v.judge == j]) for j in JUDGES]
    print(f"{'judge':8} {'knowledge kept':>15} {'guesses refused':>16} {'AUC':>6}")
    for s in judges:
        print(f"{s.judge:8} {s.knowledge_kept:>15} {s.guesses_refused:>16} {s.auc:6.3f}")
    report = JudgeReport(
        machine=machine(),
        base_url=args.base_url,
        irrelevance_sample=irrelevance,
        seed=args.seed,
        seconds=round(time.monotonic() - started, 1),
        cases=cases,
        judges=judges,
        verdicts=verdicts,
    )
    publish(report, args.output)
    return report


if __name__ == "__main__":
    main()
