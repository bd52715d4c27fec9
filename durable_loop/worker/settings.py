"""Worker process settings: command-line flags first, then environment variables, then
defaults. The Temporal connection part is :class:`~durable_loop.client.settings.TemporalSettings`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from durable_loop.client.settings import TEMPORAL_ENV, TemporalSettings, pick
from durable_loop.core.constants import (
    STATE_DIR,
    STORE_DB,
    TASK_QUEUE,
)
from durable_loop.worker.tuning import WorkerTuning

if TYPE_CHECKING:
    pass

APP_ENV: dict[str, str] = {
    "task_queue": "DURABLE_LOOP_TASK_QUEUE",
    "db_url": "DURABLE_LOOP_DB_URL",
    "tools": "DURABLE_LOOP_TOOLS",
    "deployment_name": "DURABLE_LOOP_DEPLOYMENT_NAME",
    "build_id": "DURABLE_LOOP_BUILD_ID",
}


def default_db_url(state_dir: Path = STATE_DIR) -> str:
    return f"sqlite:///{(state_dir / STORE_DB).resolve()}"


class WorkerSettings(BaseModel):
    """Everything ``durable-loop worker`` needs."""

    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    temporal: TemporalSettings = TemporalSettings()
    task_queue: str = Field(default=TASK_QUEUE, min_length=1)
    db_url: str = Field(default_factory=default_db_url)
    tools: str | None = Field(
        default=None, description="module:attribute of a ToolRegistry or a zero-arg factory"
    )
    tuning: WorkerTuning = WorkerTuning()
    deployment_name: str | None = Field(
        default=None,
        min_length=1,
        description="Worker Versioning: the worker deployment this worker belongs to; "
        "None runs an unversioned worker",
    )
    build_id: str | None = Field(
        default=None,
        min_length=1,
        description="the build id of this worker's version (default: package version "
        "and a digest of the workflow code); only with deployment_name",
    )

    @field_validator("db_url")
    @classmethod
    def _known_database(cls, value: str) -> str:
        if not value.startswith(("sqlite", "postgresql")):
            raise ValueError(
                f"unsupported database URL {value!r}: use sqlite:///PATH or "
                "postgresql://USER@HOST/DB"
            )
        return value

    @field_validator("tools")
    @classmethod
    def _module_attribute(cls, value: str | None) -> str | None:
        if value is not None and (value.count(":") != 1 or value.startswith(":")):
            raise ValueError(f"tools must look like package.module:attribute, got {value!r}")
        return value

    @model_validator(mode="after")
    def _build_id_needs_deployment(self) -> WorkerSettings:
        if self.build_id is not None and self.deployment_name is None:
            raise ValueError(
                "a build id without a deployment name: give DURABLE_LOOP_DEPLOYMENT_NAME "
                "(--deployment-name) too, or neither for an unversioned worker"
            )
        return self

    @classmethod
    def load(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        temporal: Mapping[str, object] | None = None,
        tuning: Mapping[str, object] | None = None,
        **flags: object,
    ) -> WorkerSettings:
        env = os.environ if environ is None else environ
        values = pick(APP_ENV, flags, env)
        values["temporal"] = pick(TEMPORAL_ENV, temporal or {}, env)
        values["tuning"] = {k: v for k, v in (tuning or {}).items() if v is not None}
        return cls.model_validate(values)
