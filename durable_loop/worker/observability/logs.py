"""Structured (JSON) log lines carrying the session id, turn and call id."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from durable_loop.core import names
from durable_loop.worker.observability.context import CURRENT

SESSION_PREFIX = names.session_workflow_id("")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, session_id, turn, call_id,
    and what Temporal's loggers attach (workflow id, run id, activity type, attempt)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        subject = CURRENT.get()
        if subject is not None:
            line.update(subject.model_dump(exclude_none=True))
        for key in ("temporal_workflow", "temporal_activity"):
            extra = getattr(record, key, None)
            if isinstance(extra, dict):
                line.update({k: v for k, v in extra.items() if k not in line})
        workflow_id = line.get("workflow_id")
        if (
            "session_id" not in line
            and isinstance(workflow_id, str)
            and workflow_id.startswith(SESSION_PREFIX)
        ):
            line["session_id"] = workflow_id.removeprefix(SESSION_PREFIX)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


def configure_logging(fmt: str = "text", level: str = "INFO") -> None:
    handler = logging.StreamHandler()
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
