"""Offline stand-ins for a model in the routing benchmark, served by :class:`ScriptedLLM`.

* ``keyword``: a deterministic keyword router and regex argument filler — a baseline that
  gets plain queries right and trips over nicknames, typos and general questions that
  mention a tool's topic, as a weak model would.
* ``messy``: the same decisions dressed the way small models misbehave: prose around the
  JSON, code fences, a broken object or a wrongly typed argument on the first try (fixed
  when the repair prompt arrives). It exercises extraction and the repair loop.
* ``guessing``: the keyword router as the packaged 1.5B model behaved before issue 18: it
  never asks to clarify, and its executor invents the missing identifier or amount. The
  pipeline's grounding rule (``router.protocol.ungrounded_arguments``) turns those calls
  into clarify questions.

They read the prompts the pipeline really sends (``router.prompts``), so the benchmark runs
the same code path offline as against a live endpoint.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable

from durable_loop.testing import reply
from durable_loop.testing.scripted import RecordedRequest, Reply

TOOL_WORDS = [
    ("flight_status", r"\bflight|\bplane\b|\blanded\b|\btake ?off\b"),
    ("package_track", r"\bpackage|\bparcel|\btrack|\bshipment|\bdelivery\b"),
    ("currency_convert", r"\bconvert|\bexchange|\b(usd|eur|gbp|jpy|chf|cad)\b|\bin (euros?|yen)\b"),
    ("weather_forecast", r"\bweather|\bforecast|\brain\b|\bsunny\b|\btemperature\b"),
]
CITIES = ["Paris", "Oslo", "Tokyo", "Berlin", "London", "Rome", "Frankfurt", "Denver", "New York"]
CURRENCIES = {
    "usd": "USD",
    "dollar": "USD",
    "eur": "EUR",
    "euro": "EUR",
    "gbp": "GBP",
    "pound": "GBP",
    "jpy": "JPY",
    "yen": "JPY",
    "chf": "CHF",
    "franc": "CHF",
    "cad": "CAD",
}
FLIGHT = re.compile(r"\b([A-Za-z]{2}) ?(\d{1,4})\b")
TRACKING = re.compile(r"\b([A-Z0-9]{10,30})\b")
AMOUNT = re.compile(r"\b(\d+(?:\.\d+)?)\b")
NEEDS_ID = {
    "flight_status": lambda q: FLIGHT.search(q) is not None,
    "package_track": lambda q: TRACKING.search(q) is not None,
    "currency_convert": lambda q: AMOUNT.search(q) is not None,
}


def _question(request: RecordedRequest) -> str:
    text = str(request.messages[1]["content"])
    return text.rsplit("Latest message: ", 1)[-1]


def _is_repair(request: RecordedRequest) -> bool:
    return len(request.messages) > 2


def keyword_route(question: str) -> dict[str, object]:
    lowered = question.lower()
    for tool, pattern in TOOL_WORDS:
        if re.search(pattern, lowered):
            if not NEEDS_ID.get(tool, lambda q: True)(question):
                return {"choice": "clarify", "tool": tool, "question": "Which one do you mean?"}
            return {"choice": "call_tool", "tool": tool, "question": None}
    return {"choice": "none", "tool": None, "question": None}


def _currencies(question: str) -> list[str]:
    found: list[tuple[int, str]] = []
    lowered = question.lower()
    for word, code in CURRENCIES.items():
        for match in re.finditer(rf"\b{word}", lowered):
            found.append((match.start(), code))
    codes: list[str] = []
    for _, code in sorted(found):
        if code not in codes:
            codes.append(code)
    return codes


def keyword_args(tool: str, question: str) -> dict[str, object]:
    if tool == "weather_forecast":
        city = next((c for c in CITIES if c.lower() in question.lower()), "Paris")
        days = re.search(r"next (\d+) days", question)
        return {"city": city, **({"days": int(days.group(1))} if days else {})}
    if tool == "flight_status":
        match = FLIGHT.search(question)
        return {"flight_number": f"{match.group(1)}{match.group(2)}".upper() if match else ""}
    if tool == "package_track":
        match = TRACKING.search(question)
        return {"tracking_id": match.group(1) if match else ""}
    amount = AMOUNT.search(question)
    codes = [*_currencies(question), "USD", "EUR"]
    return {
        "amount": float(amount.group(1)) if amount else 1.0,
        "from_currency": codes[0],
        "to_currency": codes[1] if codes[1] != codes[0] else codes[2],
    }


def _executor_tool(request: RecordedRequest) -> str:
    match = re.search(r"^Tool: (\w+)$", str(request.messages[0]["content"]), re.MULTILINE)
    return match.group(1) if match else ""


def _answer(request: RecordedRequest) -> Reply:
    return reply.text("Here is a short answer.")


def keyword(request: RecordedRequest) -> Reply:
    system = str(request.messages[0]["content"])
    question = _question(request)
    if system.startswith("You are a router"):
        return reply.text(json.dumps(keyword_route(question)))
    if system.startswith("You fill in the arguments"):
        tool = _executor_tool(request)
        return reply.text(json.dumps({"tool": tool, "args": keyword_args(tool, question)}))
    return _answer(request)


def _bucket(question: str) -> int:
    return int(hashlib.sha256(question.encode()).hexdigest()[:4], 16) % 4


def messy(request: RecordedRequest) -> Reply:
    clean = keyword(request)
    system = str(request.messages[0]["content"])
    if _is_repair(request) or not system.startswith(("You are a router", "You fill in")):
        return clean
    text = json.loads(clean.encoded())["choices"][0]["message"]["content"]
    bucket = _bucket(_question(request))
    if bucket == 0:
        return reply.text(text[: len(text) // 2])
    if bucket == 1 and system.startswith("You fill in"):
        value = json.loads(text)
        value["args"] = {k: str(v) for k, v in value["args"].items()}
        return reply.text(json.dumps(value))
    if bucket == 2:
        return reply.text(f"Sure! Here is the JSON you asked for:\n```json\n{text}\n```")
    return clean


GUESSES = {"flight_number": "BA123", "tracking_id": "1Z000000000000001", "amount": 100}


def guessing(request: RecordedRequest) -> Reply:
    system = str(request.messages[0]["content"])
    question = _question(request)
    if system.startswith("You are a router"):
        decision = keyword_route(question)
        if decision["choice"] == "clarify":
            decision = {**decision, "choice": "call_tool", "question": None}
        return reply.text(json.dumps(decision))
    if system.startswith("You fill in the arguments"):
        tool = _executor_tool(request)
        args = keyword_args(tool, question)
        if not NEEDS_ID.get(tool, lambda q: True)(question):
            args |= {k: v for k, v in GUESSES.items() if k in args}
        return reply.text(json.dumps({"tool": tool, "args": args}))
    return _answer(request)


BEHAVIOURS: dict[str, Callable[[RecordedRequest], Reply]] = {
    "keyword": keyword,
    "messy": messy,
    "guessing": guessing,
}
