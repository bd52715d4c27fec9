"""Coded activity failures log one line each (code, attempt, next delay), no traceback;
the last attempt's error says how many attempts were made over how long."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError

from durable_loop.testing import reply
from durable_loop.worker.failure_log import is_coded, next_delay, retried
from tests.conftest import settings_for, unique

POLICY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=3),
    maximum_attempts=4,
    non_retryable_error_types=["PROVIDER_AUTH"],
)


@pytest.mark.parametrize(
    ("code", "coded"),
    [("HTTP_429", True), ("PROVIDER_UNAVAILABLE", True), ("KeyError", False), (None, False)],
)
def test_codes_are_the_vocabulary_and_http_statuses(code, coded):
    assert is_coded(code) is coded


def test_next_delay_follows_the_policy_or_the_providers_retry_after():
    plain = ApplicationError("busy", type="HTTP_503")
    assert [next_delay(plain, POLICY, n).total_seconds() for n in (1, 2, 3)] == [1, 2, 3]
    asked = ApplicationError("busy", type="HTTP_429", next_retry_delay=timedelta(seconds=7))
    assert next_delay(asked, POLICY, 1) == timedelta(seconds=7)


def test_what_is_retried():
    assert retried(ApplicationError("x", type="HTTP_500"), POLICY, 3)
    assert not retried(ApplicationError("x", type="HTTP_500"), POLICY, 4)
    assert not retried(ApplicationError("x", type="PROVIDER_AUTH"), POLICY, 1)
    assert not retried(ApplicationError("x", type="X", non_retryable=True), POLICY, 1)


def failure_records(caplog):
    return [r for r in caplog.records if "Completing activity as failed" in r.getMessage()]


async def test_a_retried_429_logs_one_line_without_a_traceback(loop_worker, scripted_llm, caplog):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.error(429, "slow down", retry_after=0.2), reply.text("ok")])
    caplog.set_level(logging.INFO)
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        result = await w.sessions.send(sid, "hi")

    assert result.status == "completed"
    lines = [r.getMessage() for r in caplog.records if "HTTP_429" in r.getMessage()]
    assert len(lines) == 1
    assert "attempt 1 failed: HTTP_429" in lines[0] and "retrying in 0.2s" in lines[0]
    assert not [r for r in caplog.records if r.exc_info and r.levelno >= logging.INFO]
    assert not [r for r in failure_records(caplog) if r.levelno >= logging.INFO]


async def test_exhausted_timeouts_say_how_many_attempts_over_how_long(
    loop_worker, scripted_llm, caplog
):
    model, sid = unique("m"), unique("s")
    slow = reply.slow(reply.text("too late"), 2.0)
    scripted_llm.script(model, [slow, slow, slow])
    caplog.set_level(logging.INFO)
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, timeout_s=0.3))
        result = await w.sessions.send(sid, "hi")

    assert result.status == "failed" and result.error is not None
    assert result.error.code == "PROVIDER_UNAVAILABLE"
    host = scripted_llm.base_url.split("//", 1)[1]
    assert f"{host} (model {model}) did not answer within 0.3s" in result.error.message
    assert "gave up after 3 attempts over" in result.error.message
    assert not [r for r in caplog.records if r.exc_info and r.levelno >= logging.INFO]


async def test_a_refused_key_logs_one_warning_line_and_is_not_retried(
    loop_worker, scripted_llm, caplog
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.error(401, "invalid api key")])
    caplog.set_level(logging.INFO)
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        result = await w.sessions.send(sid, "hi")

    assert result.error is not None and result.error.code == "PROVIDER_AUTH"
    assert "attempts" not in result.error.message
    [line] = [r for r in caplog.records if "PROVIDER_AUTH" in r.getMessage()]
    assert line.levelno == logging.WARNING and line.exc_info is None
    assert "attempt 1 failed" in line.getMessage() and "not retried" in line.getMessage()
