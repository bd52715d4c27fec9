"""One :class:`SessionSettings` object for all the workflow inputs that carry the same
settings.

Every cached session workflow holds the settings it was started with (decoded from its
input payload, ~12 KB of Python heap for the default settings). Sessions started by one
service almost always carry identical settings, so :data:`SharedSettings` (the type of
``SessionInput.settings``) hands every decoded input the one object already made for that
content instead of a copy of its own.

Why this cannot change what a workflow does: the shared object is made by
:func:`_settings_from`, a pure function of the settings' canonical JSON (fields set by the
caller only, so ``model_fields_set`` matches too), and it is used only when it compares
equal to the decoded value; ``SessionSettings`` and the models in it are frozen, and
workflow code derives new settings with ``model_copy`` instead of changing them in place.
The memo holds values, never a run's state: a run that meets an entry another run made
sees exactly what decoding its own payload would have produced.
"""

from __future__ import annotations

import functools
from typing import Annotated

from pydantic import AfterValidator

from durable_loop.core.config import SessionSettings

__all__ = ["SHARED_SETTINGS_KEPT", "SharedSettings", "shared_settings"]

SHARED_SETTINGS_KEPT = 256
"""Distinct settings kept (least recently used dropped); a session holding dropped
settings keeps its object, only later inputs get a new one."""


@functools.lru_cache(maxsize=SHARED_SETTINGS_KEPT)
def _settings_from(canonical: str) -> SessionSettings:
    return SessionSettings.model_validate_json(canonical)


def shared_settings(settings: SessionSettings) -> SessionSettings:
    """The shared object equal to ``settings`` (``settings`` itself if none can be)."""
    shared = _settings_from(settings.model_dump_json(exclude_unset=True))
    return shared if shared == settings else settings


SharedSettings = Annotated[SessionSettings, AfterValidator(shared_settings)]
