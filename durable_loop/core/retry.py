"""Retry settings in plain numbers; the tool specs and the endpoint both carry one."""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel, ConfigDict, Field


class RetrySettings(BaseModel):
    """A Temporal retry policy in plain numbers."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    initial_interval_s: float = Field(default=1.0, gt=0)
    backoff_coefficient: float = Field(default=2.0, ge=1.0)
    maximum_interval_s: float = Field(default=60.0, gt=0)
    maximum_attempts: int = Field(default=5, ge=0, description="0 means unlimited")

    def initial_interval(self) -> timedelta:
        return timedelta(seconds=self.initial_interval_s)

    def maximum_interval(self) -> timedelta:
        return timedelta(seconds=self.maximum_interval_s)
