"""infra/: the compose file, Dockerfile and runbook, checked without a Docker engine.

Nothing here starts a container (no Docker engine runs in CI): the compose file is parsed
as YAML, its variables interpolated the way Compose does, and every setting checked
against what the package reads.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

import durable_loop
from durable_loop.cli.app import ENTRIES
from durable_loop.cli.devserver import DYNAMIC_CONFIG
from durable_loop.worker.settings import WorkerSettings

INFRA = Path(__file__).resolve().parents[2] / "infra"
PACKAGE = Path(durable_loop.__file__).parent
VARIABLE = re.compile(r"\$\{(\w+)(?::([-?])([^}]*))?\}")
ENV = {"POSTGRES_PASSWORD": "pw-for-test", "DURABLE_LOOP_CODEC_KEYS": ""}


def interpolate(node: object, env: dict[str, str]) -> object:
    """Compose's ``${VAR}``, ``${VAR:-default}`` and ``${VAR:?error}``."""
    if isinstance(node, str):

        def value(match: re.Match[str]) -> str:
            name, kind, rest = match.groups()
            if env.get(name):
                return env[name]
            if kind == "?":
                raise KeyError(f"{name}: {rest}")
            return rest if kind == "-" else ""

        return VARIABLE.sub(value, node)
    if isinstance(node, dict):
        return {k: interpolate(v, env) for k, v in node.items()}
    if isinstance(node, list):
        return [interpolate(v, env) for v in node]
    return node


@pytest.fixture(scope="module")
def compose() -> dict:
    raw = yaml.safe_load((INFRA / "docker-compose.yml").read_text())
    assert isinstance(raw, dict)
    return interpolate(raw, ENV)  # type: ignore[return-value]


def environment(service: dict) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: str(v) for k, v in env.items()}


def test_services_and_images(compose):
    services = compose["services"]
    assert {"postgresql", "temporal", "temporal-ui", "worker", "service", "codec-server"} <= set(
        services
    )
    assert services["postgresql"]["image"].startswith("postgres:")
    assert services["temporal"]["image"].startswith("temporalio/auto-setup:")
    assert services["temporal-ui"]["image"].startswith("temporalio/ui:")
    for name in ("worker", "service", "codec-server"):
        build = services[name]["build"]
        assert build["dockerfile"] == "infra/Dockerfile"
        assert (INFRA / build["context"] / build["dockerfile"]).resolve().is_file()


def test_the_cluster_reads_history_queues_as_fast_as_the_dev_server_needs(compose):
    temporal = compose["services"]["temporal"]
    path = environment(temporal)["DYNAMIC_CONFIG_FILE_PATH"]
    mounts = {m.split(":")[1]: m.split(":")[0] for m in temporal["volumes"]}
    config = yaml.safe_load((INFRA / mounts[path]).read_text())
    for key in DYNAMIC_CONFIG:
        (setting,) = config[key]
        assert setting["value"] > 20, f"{key} at the server's default of 20 reads/s"


def test_temporal_persists_in_postgresql(compose):
    temporal = environment(compose["services"]["temporal"])
    assert temporal["DB"] == "postgres12"
    assert temporal["POSTGRES_SEEDS"] == "postgresql"
    assert temporal["POSTGRES_PWD"] == ENV["POSTGRES_PASSWORD"]
    ui = environment(compose["services"]["temporal-ui"])
    assert ui["TEMPORAL_ADDRESS"] == "temporal:7233"
    assert ui["TEMPORAL_CODEC_ENDPOINT"].endswith(":8081")


def test_depends_on_names_services_and_waits_for_health(compose):
    services = compose["services"]
    for name, service in services.items():
        depends = service.get("depends_on") or {}
        for target, condition in depends.items() if isinstance(depends, dict) else []:
            assert target in services, (name, target)
            if condition.get("condition") == "service_healthy":
                assert "healthcheck" in services[target], (name, target)
    for app_service in ("worker", "service"):
        assert set(services[app_service]["depends_on"]) == {"temporal", "postgresql"}
    assert set(services["temporal"]["depends_on"]) == {"postgresql"}


def test_host_ports_do_not_clash(compose):
    published = [
        str(port).split(":")[0] for s in compose["services"].values() for port in s.get("ports", [])
    ]
    assert len(published) == len(set(published)), published


def test_app_environment_is_what_the_package_reads(compose):
    source = "\n".join(p.read_text() for p in PACKAGE.rglob("*.py"))
    for name in ("worker", "service", "codec-server"):
        env = environment(compose["services"][name])
        for variable in env:
            if variable.startswith(("DURABLE_LOOP_", "TEMPORAL_")):
                assert f'"{variable}"' in source, (name, variable)
    worker_env = environment(compose["services"]["worker"])
    settings = WorkerSettings.load(worker_env)
    assert settings.db_url.startswith("postgresql://temporal:pw-for-test@postgresql:5432/")
    assert settings.temporal.address == "temporal:7233"
    assert settings.temporal.key_ring() is None  # encryption is opt-in


def test_the_database_for_the_store_is_created(compose):
    url = environment(compose["services"]["worker"])["DURABLE_LOOP_DB_URL"]
    database = url.rsplit("/", 1)[1]
    assert f"CREATE DATABASE {database}" in (INFRA / "postgres-init.sql").read_text()
    mounts = compose["services"]["postgresql"]["volumes"]
    assert any(m.startswith("./postgres-init.sql:/docker-entrypoint-initdb.d/") for m in mounts)


def test_required_variables_fail_loudly():
    raw = yaml.safe_load((INFRA / "docker-compose.yml").read_text())
    with pytest.raises(KeyError, match="POSTGRES_PASSWORD"):
        interpolate(raw, {})


def test_dockerfile_targets_run_real_commands(compose):
    dockerfile = (INFRA / "Dockerfile").read_text()
    targets = set(re.findall(r"^FROM \S+ AS (\S+)$", dockerfile, re.MULTILINE))
    commands = {name for name, entry in ENTRIES.items() if not entry.hidden}
    for name in ("worker", "service", "codec-server"):
        assert compose["services"][name]["build"]["target"] in targets
    for entrypoint in re.findall(r'^ENTRYPOINT \["durable-loop", "([\w-]+)"', dockerfile, re.M):
        assert entrypoint in commands, entrypoint
    assert '".[postgres,crypto]"' in dockerfile


def test_runbook_says_it_was_not_started_here_and_names_the_settings():
    runbook = (INFRA / "RUNBOOK.md").read_text()
    assert "not started here" in runbook.lower()
    for variable in (
        "TEMPORAL_ADDRESS",
        "TEMPORAL_NAMESPACE",
        "TEMPORAL_API_KEY",
        "TEMPORAL_TLS_CLIENT_CERT_PATH",
        "DURABLE_LOOP_DB_URL",
        "DURABLE_LOOP_TASK_QUEUE",
        "DURABLE_LOOP_CODEC_KEYS",
    ):
        assert variable in runbook, variable
