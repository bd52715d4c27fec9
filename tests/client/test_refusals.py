"""An Update refusal carries its code as the failure's type; clients never parse it out
of the text."""

from __future__ import annotations

from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from durable_loop.client.refusals import refusal_of
from durable_loop.core.errors import ErrorCode
from durable_loop.workflows.refusals import refuse


def test_the_code_travels_as_the_failure_type():
    failure = refuse(ErrorCode.FINGERPRINT_MISMATCH, "proposal p-1 has fingerprint abc")
    assert failure.type == "FINGERPRINT_MISMATCH" and failure.non_retryable
    refused = refusal_of(WorkflowUpdateFailedError(failure))
    assert refused.code is ErrorCode.FINGERPRINT_MISMATCH
    assert refused.message == "proposal p-1 has fingerprint abc"
    assert refused.text == "FINGERPRINT_MISMATCH: proposal p-1 has fingerprint abc"


def test_text_that_only_looks_coded_is_not_a_code():
    failure = ApplicationError("EXPIRED: not from a validator", type="ValueError")
    refused = refusal_of(WorkflowUpdateFailedError(failure))
    assert refused.code is None and refused.message == "EXPIRED: not from a validator"
