"""Settings: flags beat environment variables, which beat defaults; bad values fail typed."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from durable_loop.client.connect import tls_config
from durable_loop.client.settings import TemporalSettings
from durable_loop.worker.settings import WorkerSettings, default_db_url

ENV = {
    "TEMPORAL_ADDRESS": "temporal.example:7233",
    "TEMPORAL_NAMESPACE": "prod",
    "TEMPORAL_API_KEY": "k-123",
    "TEMPORAL_TLS": "false",
    "DURABLE_LOOP_TASK_QUEUE": "q-env",
    "DURABLE_LOOP_DB_URL": "postgresql://u@db/loop",
    "DURABLE_LOOP_TOOLS": "pkg.mod:registry",
}


def test_defaults_without_environment(tmp_path):
    settings = WorkerSettings.load({})
    assert settings.temporal.address == "127.0.0.1:7233"
    assert settings.temporal.namespace == "default"
    assert settings.task_queue == "durable-loop"
    assert settings.db_url == default_db_url()
    assert settings.db_url.endswith(".durable-loop/durable-loop.db")
    assert settings.tools is None
    assert settings.temporal.ui_url(tmp_path) is None  # no `durable-loop server` recorded there


def test_environment_fills_what_flags_leave_out(tmp_path):
    settings = WorkerSettings.load(
        ENV,
        temporal={"namespace": "flag-ns", "address": None},
        tuning={"max_concurrent_activities": 7, "activity_task_pollers": None},
        task_queue=None,
        db_url="sqlite:///x.db",
    )
    assert settings.temporal.address == "temporal.example:7233"
    assert settings.temporal.namespace == "flag-ns"
    assert settings.temporal.api_key == "k-123"
    assert settings.temporal.tls is False
    assert settings.task_queue == "q-env"
    assert settings.db_url == "sqlite:///x.db"
    assert settings.tools == "pkg.mod:registry"
    assert settings.tuning.max_concurrent_activities == 7
    assert settings.tuning.activity_task_pollers is None
    assert settings.temporal.ui_url(tmp_path) is None
    assert "k-123" not in repr(settings)


@pytest.mark.parametrize(
    ("env", "path"),
    [
        ({"TEMPORAL_ADDRESS": "no-port"}, "temporal.address"),
        ({"TEMPORAL_TLS": "maybe"}, "temporal.tls"),
        ({"DURABLE_LOOP_DB_URL": "mysql://x"}, "db_url"),
        ({"DURABLE_LOOP_TOOLS": "no_colon"}, "tools"),
    ],
)
def test_bad_values_name_the_field(env, path):
    with pytest.raises(ValidationError) as caught:
        WorkerSettings.load(env)
    first = caught.value.errors()[0]
    assert ".".join(str(p) for p in first["loc"]) == path


def test_tls_follows_the_temporal_cli_rules(tmp_path: Path):
    assert tls_config(TemporalSettings.load({})) is None
    assert tls_config(TemporalSettings.load({"TEMPORAL_TLS": "true"})) is True
    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    cert.write_bytes(b"CERT")
    key.write_bytes(b"KEY")
    config = tls_config(
        TemporalSettings.load(
            {
                "TEMPORAL_TLS_CLIENT_CERT_PATH": str(cert),
                "TEMPORAL_TLS_CLIENT_KEY_PATH": str(key),
                "TEMPORAL_TLS_SERVER_NAME": "srv",
            }
        )
    )
    assert config is not None and not isinstance(config, bool)
    assert (config.client_cert, config.client_private_key, config.domain) == (
        b"CERT",
        b"KEY",
        "srv",
    )
    forced_off = TemporalSettings.load({"TEMPORAL_TLS": "0", "TEMPORAL_API_KEY": "k"})
    assert tls_config(forced_off) is False
