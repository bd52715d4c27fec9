"""Ensembles: named groups of tools declared in Python or in TOML descriptor files."""

from durable_loop.tools.ensembles.descriptors import (
    DescriptorProblem,
    EnsembleLoadError,
    load_ensemble,
    load_ensemble_dir,
    load_ensembles,
)
from durable_loop.tools.ensembles.model import Ensemble, EnsembleDefaults, registry_from
from durable_loop.tools.ensembles.profiles import (
    ToolProfile,
    ToolSelection,
    apply_profile,
    load_profiles,
    resolve_profile,
)

__all__ = [
    "DescriptorProblem",
    "Ensemble",
    "EnsembleDefaults",
    "EnsembleLoadError",
    "ToolProfile",
    "ToolSelection",
    "apply_profile",
    "load_ensemble",
    "load_ensemble_dir",
    "load_ensembles",
    "load_profiles",
    "registry_from",
    "resolve_profile",
]
