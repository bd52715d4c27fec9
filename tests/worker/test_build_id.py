"""The default build id: the same workflow code gives the same id, any change a new one;
settings take a deployment name and build id from flags or environment."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError
from temporalio.common import VersioningBehavior
from temporalio.workflow import _Definition

from durable_loop.worker.build_id import (
    PACKAGE_ROOT,
    default_build_id,
    package_version,
    workflow_code_digest,
)
from durable_loop.worker.settings import WorkerSettings
from durable_loop.worker.versioning import deployment_config
from durable_loop.workflows.registered import WORKFLOWS

PACKAGE = PACKAGE_ROOT


def copy_of_workflow_code(tmp_path: Path) -> Path:
    for package in ("workflows", "core"):
        shutil.copytree(
            PACKAGE / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    return tmp_path


def test_the_same_code_gives_the_same_id_and_any_change_another(tmp_path):
    copy = copy_of_workflow_code(tmp_path)
    assert workflow_code_digest(copy) == workflow_code_digest(PACKAGE)
    assert default_build_id(copy) == default_build_id()
    assert default_build_id().startswith(f"{package_version()}-")

    session = copy / "workflows" / "session.py"
    session.write_text(session.read_text() + "\n# a comment is a change too\n")
    edited = workflow_code_digest(copy)
    (copy / "core" / "new_helper.py").write_text("X = 1\n")
    added = workflow_code_digest(copy)
    assert len({workflow_code_digest(PACKAGE), edited, added}) == 3


def test_a_deployment_name_makes_a_pinned_versioned_worker_and_none_an_unversioned_one():
    assert deployment_config(None) is None
    named = deployment_config("shop", "b7")
    assert named is not None and named.use_worker_versioning
    assert (named.version.deployment_name, named.version.build_id) == ("shop", "b7")
    assert named.default_versioning_behavior.name == "PINNED"
    derived = deployment_config("shop")
    assert derived is not None and derived.version.build_id == default_build_id()


def test_workflows_declare_no_behaviour_and_a_versioned_worker_pins_them():
    """A server refuses a declared behaviour from an unversioned worker, so the workflows
    declare none; a versioned worker's default pins every one of them."""
    behaviours = {
        _Definition.must_from_class(w).name: _Definition.must_from_class(w).versioning_behavior
        for w in WORKFLOWS
    }
    assert behaviours == dict.fromkeys(behaviours, VersioningBehavior.UNSPECIFIED)
    assert len(behaviours) == 3
    config = deployment_config("shop", "b1")
    assert config is not None
    assert config.default_versioning_behavior is VersioningBehavior.PINNED
    assert deployment_config(None) is None


def test_settings_take_the_deployment_from_flags_then_environment():
    env = {"DURABLE_LOOP_DEPLOYMENT_NAME": "shop", "DURABLE_LOOP_BUILD_ID": "env-build"}
    assert WorkerSettings.load({}).deployment_name is None
    from_env = WorkerSettings.load(env)
    assert (from_env.deployment_name, from_env.build_id) == ("shop", "env-build")
    flagged = WorkerSettings.load(env, build_id="flag-build")
    assert (flagged.deployment_name, flagged.build_id) == ("shop", "flag-build")
    with pytest.raises(ValidationError, match="build id without a deployment name"):
        WorkerSettings.load({"DURABLE_LOOP_BUILD_ID": "orphan"})
