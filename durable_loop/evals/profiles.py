"""Sampling profiles and which models each applies to."""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from durable_loop.cli.errors import CliError
from durable_loop.core.catalog import CATALOG, SamplingProfile
from durable_loop.evals.codes import EvalCode
from durable_loop.evals.filters import Selected


@dataclass(frozen=True)
class Profile:
    """``catalog=True``: each model's own recommended profile (models without one skip
    it); ``applies_to``: model-id patterns, empty for every model."""

    name: str
    options: dict[str, float]
    applies_to: tuple[str, ...] = ()
    catalog: bool = False

    def resolve(self, model: Selected) -> SamplingProfile | None:
        if self.catalog:
            if model.entry is None or model.entry.sampling is None:
                return None
            return SamplingProfile(name=self.name, options=dict(model.entry.sampling.options))
        if self.applies_to and not any(fnmatchcase(model.model, p) for p in self.applies_to):
            return None
        return SamplingProfile(name=self.name, options=dict(self.options))


BUILTIN: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("default", {}),
        Profile("catalog", {}, catalog=True),
        Profile("greedy", {"temperature": 0.0}),
        Profile("balanced", {"temperature": 0.7, "top_p": 0.9}),
        Profile("creative", {"temperature": 1.2, "top_p": 0.95}),
        Profile(
            "qwen_recommended",
            {"temperature": 0.7, "top_p": 0.8, "top_k": 20, "min_p": 0},
            applies_to=("*qwen*",),
        ),
    )
}


def profile_names() -> list[str]:
    catalog_names = {e.sampling.name for e in CATALOG if e.sampling}
    return sorted({*BUILTIN, *catalog_names})


def profiles(spec: str) -> list[Profile]:
    """Built-in names, or a catalog profile's name (applies to the models that carry it)."""
    out = []
    for name in [p.strip() for p in spec.split(",") if p.strip()] or ["default"]:
        if name in BUILTIN:
            out.append(BUILTIN[name])
            continue
        owners = [e for e in CATALOG if e.sampling and e.sampling.name == name]
        if not owners:
            raise CliError(
                EvalCode.UNKNOWN_PROFILE,
                f"unknown sampling profile {name!r}; profiles: {', '.join(profile_names())}",
            )
        sampling = owners[0].sampling
        assert sampling is not None
        out.append(
            Profile(
                name,
                {k: float(v) for k, v in sampling.options.items() if isinstance(v, int | float)},
                applies_to=tuple(e.model for e in owners),
            )
        )
    return out
