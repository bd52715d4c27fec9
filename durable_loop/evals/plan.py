"""Turn a selection (scenarios x models x profiles x strategies x fallback x trials) into
jobs, offline against scripted behaviours or live against real endpoints."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from pydantic import JsonValue

from durable_loop.core import presets
from durable_loop.core.catalog import SamplingProfile
from durable_loop.core.config import SessionSettings
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.retry import RetrySettings
from durable_loop.evals.behaviours import Behaviour
from durable_loop.evals.harness import WORKSPACE_TOOLS
from durable_loop.evals.runner import Job
from durable_loop.evals.scenario import Scenario
from durable_loop.testing.scripted import ScriptedLLM

Update = dict[str, JsonValue]
OFFLINE_RETRY = RetrySettings(initial_interval_s=0.1, maximum_interval_s=1.0, maximum_attempts=2)


def scenario_update(scenario: Scenario) -> Update:
    names: list[JsonValue] = list(WORKSPACE_TOOLS)
    if scenario.extra_tools is not None:
        names += scenario.extra_tools().names()
    return presets.compose({"tool_allowlist": names}, scenario.runtime)


def job_settings(
    endpoint: LlmEndpoint,
    scenario: Scenario,
    *updates: Update,
    fallback_llms: list[LlmEndpoint] | None = None,
) -> SessionSettings:
    runtime = presets.apply(*updates, scenario_update(scenario))
    return SessionSettings(llm=endpoint, runtime=runtime, fallback_llms=fallback_llms or [])


def offline_jobs(
    scenarios: list[Scenario],
    behaviour: Behaviour,
    llm: ScriptedLLM,
    *,
    strategy: str,
    update: Update,
    trials: int = 1,
    timeout_s: float = 60.0,
) -> list[Job]:
    """One job per scenario and trial, each on its own scripted model name."""
    jobs = []
    for scenario in scenarios:
        for trial in range(1, trials + 1):
            model = f"{behaviour.name}-{scenario.name}-{uuid.uuid4().hex[:8]}"
            llm.script(model, [], then=behaviour.step(scenario))
            endpoint = LlmEndpoint(
                model=model, base_url=llm.base_url, timeout_s=10.0, retry=OFFLINE_RETRY
            )
            jobs.append(
                Job(
                    scenario=scenario,
                    settings=job_settings(endpoint, scenario, update),
                    model=behaviour.name,
                    provider="scripted",
                    profile="scripted",
                    strategy=strategy,
                    trial=trial,
                    timeout_s=timeout_s,
                )
            )
    return jobs


@dataclass(frozen=True)
class LiveModel:
    endpoint: LlmEndpoint
    label: str


@dataclass(frozen=True)
class LivePlan:
    models: list[LiveModel]
    profiles: list[SamplingProfile]
    strategies: list[str]
    fallback: list[bool]
    trials: int
    timeout_s: float
    request_overrides: Update = field(default_factory=dict)
    sampling_defaults: Update = field(default_factory=dict)
    fallback_model: LlmEndpoint | None = None
    heartbeat_timeout_s: float | None = 60.0
    """Long enough for a busy CPU model on a two-core machine (see docs/evals.md)."""


def strategy_update(strategy: str, endpoint: LlmEndpoint) -> Update:
    """baseline: defaults + provider normalisation; production: + the catalog's
    workarounds (presets.for_model)."""
    return presets.for_model(
        endpoint.provider, endpoint.model, workarounds=strategy == "production"
    )


def live_jobs(
    plan: LivePlan, scenarios: list[Scenario], applicable: dict[str, list[str]]
) -> list[Job]:
    """``applicable``: model label -> profile names that apply to it."""
    jobs = []
    for model in plan.models:
        for profile in plan.profiles:
            if profile.name not in applicable.get(model.label, []):
                continue
            options = {**plan.sampling_defaults, **profile.options}
            endpoint = model.endpoint.model_copy(
                update={"llm_options": {**model.endpoint.llm_options, **options}}
            )
            for strategy in plan.strategies:
                for fallback in plan.fallback:
                    chain = [plan.fallback_model] if fallback and plan.fallback_model else []
                    for scenario in scenarios:
                        for trial in range(1, plan.trials + 1):
                            update = presets.compose(
                                strategy_update(strategy, endpoint),
                                {"request_overrides": plan.request_overrides},
                                {"heartbeat_timeout_s": plan.heartbeat_timeout_s},
                                # the profile wins over the catalog's sampling
                                {"request_overrides": options} if options else {},
                            )
                            jobs.append(
                                Job(
                                    scenario=scenario,
                                    settings=job_settings(
                                        endpoint, scenario, update, fallback_llms=chain
                                    ),
                                    model=model.label,
                                    provider=endpoint.provider,
                                    profile=profile.name,
                                    strategy=strategy,
                                    trial=trial,
                                    fallback=fallback,
                                    timeout_s=plan.timeout_s,
                                )
                            )
    return jobs
