"""Every activity the workers register has a typed reference in the core with the same name,
input model and output model, so a workflow's call cannot drift from the activity it calls."""

import importlib
import inspect
import pkgutil
from typing import get_type_hints

from temporalio import activity

import durable_loop.activities
from durable_loop.core import activity_refs


def registered_activities() -> dict[str, object]:
    found: dict[str, object] = {}
    for info in pkgutil.iter_modules(durable_loop.activities.__path__):
        module = importlib.import_module(f"durable_loop.activities.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__:
                continue
            for _, fn in inspect.getmembers(cls, inspect.isfunction):
                definition = activity._Definition.from_callable(fn)
                if definition is not None:
                    found[definition.name] = fn
    return found


def test_each_activity_has_one_reference_with_its_models() -> None:
    activities = registered_activities()
    refs = {ref.name: ref for ref in activity_refs.ALL}
    assert set(refs) == set(activities)
    for name, fn in activities.items():
        hints = get_type_hints(fn)
        arg = next(p for p in inspect.signature(fn).parameters if p != "self")
        assert hints[arg] is refs[name].input, name
        assert hints["return"] is refs[name].output, name
