"""The codes of evals and the routing benchmark: their options, and a run's failed checks.

Members of :class:`~durable_loop.core.errors.Code`, as stable as the runtime's codes (they
are printed and written into eval reports). Unknown scenario names are the CLI's
``UNKNOWN_SCENARIO`` (``durable_loop.cli.codes``), shared with chaos runs.
``docs/architecture.md`` (Errors, "Evals") lists them.
"""

from __future__ import annotations

from durable_loop.core.errors import Code


class EvalCode(Code):
    # options
    BAD_JSON = "BAD_JSON"
    BAD_MODEL_FILTER = "BAD_MODEL_FILTER"
    NO_MODELS = "NO_MODELS"
    MODEL_FILTER_UNSUPPORTED = "MODEL_FILTER_UNSUPPORTED"
    MISSING_MODEL = "MISSING_MODEL"
    NO_BASE_URL = "NO_BASE_URL"
    NO_API_KEY = "NO_API_KEY"
    NO_FALLBACK_MODEL = "NO_FALLBACK_MODEL"
    UNKNOWN_PROFILE = "UNKNOWN_PROFILE"
    UNKNOWN_STRATEGY = "UNKNOWN_STRATEGY"
    UNKNOWN_PIPELINE = "UNKNOWN_PIPELINE"
    UNKNOWN_BEHAVIOUR = "UNKNOWN_BEHAVIOUR"
    BAD_RESUME = "BAD_RESUME"
    RESUME_MISMATCH = "RESUME_MISMATCH"
    # a run's outcome
    ASSERTION_FAILED = "ASSERTION_FAILED"
