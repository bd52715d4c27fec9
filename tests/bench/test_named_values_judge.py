"""``bench/named_values_judge.py`` in its quick mode against the scripted endpoint: the
model's first calls fill every value with a guess, and the judge answers by the values it
is shown, so each side's count and the AUC can be checked."""

from __future__ import annotations

import json
import math

import pytest

pytest.importorskip("bfcl_eval", reason="bfcl-eval is not installed (make bfcl)")

from bench.named_values_judge import JUDGES, QUICK_CASES, main
from durable_loop.testing import RecordedRequest, Reply, ScriptedLLM

GUESS = "somewhere"


def guessed_call(request: RecordedRequest) -> Reply:
    """A call of the first tool offered with a made-up value for each required argument."""
    function = request.body["tools"][0]["function"]
    args = {name: GUESS for name in function["parameters"].get("required", [])}
    call = {"id": "c1", "type": "function", "function": {"name": function["name"]}}
    call["function"]["arguments"] = json.dumps(args)
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return Reply(body={"choices": [{"index": 0, "message": message}]})


def judged(request: RecordedRequest) -> Reply:
    """A no (P(yes) 0.2) when the question shows the guess, else a yes (P(yes) 0.9)."""
    guessed = GUESS in request.messages[-1]["content"]
    p_yes = 0.2 if guessed else 0.9
    top = [
        {"token": "Yes", "logprob": math.log(p_yes)},
        {"token": "No", "logprob": math.log(1 - p_yes)},
    ]
    message = {"role": "assistant", "content": "No" if guessed else "Yes"}
    choice = {"index": 0, "message": message, "logprobs": {"content": [{"top_logprobs": top}]}}
    return Reply(body={"choices": [choice]})


def test_the_quick_run_counts_knowledge_kept_and_guesses_refused_per_judge(tmp_path):
    output = tmp_path / "judge.json"
    with ScriptedLLM() as llm:
        llm.script("judge", [], then=lambda r: guessed_call(r) if "tools" in r.body else judged(r))
        url = llm.base_url + "/v1"
        report = main(["--quick", "--base-url", url, "--model", "judge", "--output", str(output)])
        asked = llm.requests("judge")
    knowledge = [c for c in report.cases if c.kind == "knowledge"]
    guesses = [c for c in report.cases if c.kind == "guess"]
    assert len(knowledge) == QUICK_CASES and guesses
    assert all(GUESS in c.unsaid.values() for c in guesses)
    assert len(asked) == QUICK_CASES + len(JUDGES) * len(report.cases)
    shown = {j.judge for j in report.judges if "{value}" in j.wording}
    assert shown == {"known", "given"}
    for judge in report.judges:
        refused = len(guesses) if judge.judge in shown else 0
        assert judge.knowledge_kept == f"{QUICK_CASES}/{QUICK_CASES}"
        assert judge.guesses_refused == f"{refused}/{len(guesses)}"
        assert judge.auc == (1.0 if judge.judge in shown else 0.5)
    [known] = [j for j in report.judges if j.judge == "known"]
    assert known.cuts == [
        f"P(yes) <= 0.2: guesses refused {len(guesses)}/{len(guesses)}, "
        f"knowledge lost 0/{QUICK_CASES}"
    ]
    assert json.loads(output.read_text())["benchmark"] == "named_values_judge"
