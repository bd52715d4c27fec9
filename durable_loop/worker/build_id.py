"""The default build id of a versioned worker: the package version plus a digest of the
workflow code, so two different workflow codes never share an id and the same code always
gets the same one (every worker of a build, on any machine, reports the same version)."""

from __future__ import annotations

import hashlib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
DIGEST_CHARS = 12
WORKFLOW_CODE = ("workflows", "core")
"""The packages whose source decides what a session workflow does: the workflows and the
pure core they import. A change anywhere in them gives a new build id (over-inclusive on
purpose: a core change no workflow sees costs a needless new build, never a shared id)."""


def package_version() -> str:
    try:
        return version("durable-loop")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+source"


def workflow_code_digest(root: Path | None = None) -> str:
    """sha256 over the path and bytes of every ``.py`` file of :data:`WORKFLOW_CODE`, in
    sorted path order."""
    base = root or PACKAGE_ROOT
    digest = hashlib.sha256()
    for package in WORKFLOW_CODE:
        for path in sorted((base / package).rglob("*.py")):
            digest.update(path.relative_to(base).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def default_build_id(root: Path | None = None) -> str:
    return f"{package_version()}-{workflow_code_digest(root)[:DIGEST_CHARS]}"
