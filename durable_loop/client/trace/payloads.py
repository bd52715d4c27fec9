"""Reading history payloads and failures as typed values (pure)."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ValidationError
from temporalio.api.common.v1 import Payloads
from temporalio.api.failure.v1 import Failure
from temporalio.contrib.pydantic import pydantic_data_converter

from durable_loop.core.errors import CodedError, ErrorCode

M = TypeVar("M", bound=BaseModel)
CONVERTER = pydantic_data_converter.payload_converter


def decode_payload(payloads: Payloads, model: type[M]) -> M | None:
    """The first payload as ``model``; None when there is none or it has another shape
    (a payload of another version must not stop the trace)."""
    if not payloads.payloads:
        return None
    try:
        value = CONVERTER.from_payloads([payloads.payloads[0]], [model])[0]
    except (ValidationError, ValueError, TypeError):
        return None
    return value if isinstance(value, model) else None


def failure_error(failure: Failure) -> CodedError:
    """The code a failure carries (an ApplicationError's type: provider, config and refusal
    codes), or a generic one for timeouts and cancellations."""
    if failure.HasField("application_failure_info") and failure.application_failure_info.type:
        code = failure.application_failure_info.type
    elif failure.HasField("timeout_failure_info"):
        code = ErrorCode.TIMEOUT
    elif failure.HasField("canceled_failure_info"):
        code = ErrorCode.CANCELED
    else:
        code = ErrorCode.ACTIVITY_FAILED
    return CodedError(code=code, message=" ".join(failure.message.split()))
