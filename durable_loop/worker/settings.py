"""Process settings: command-line flags first, then environment variables, then defaults.

The Temporal connection variables are the ones the Temporal CLI reads, so one shell
environment serves both tools. This module is the only place that reads them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, field_validator

from durable_loop.core.constants import (
    DEFAULT_ADDRESS,
    DEFAULT_NAMESPACE,
    STATE_DIR,
    STORE_DB,
    TASK_QUEUE,
)
from durable_loop.worker.builder import WorkerTuning

if TYPE_CHECKING:
    from durable_loop.client.codec.keys import KeyRing

TEMPORAL_ENV: dict[str, str] = {
    "address": "TEMPORAL_ADDRESS",
    "namespace": "TEMPORAL_NAMESPACE",
    "api_key": "TEMPORAL_API_KEY",
    "tls": "TEMPORAL_TLS",
    "tls_client_cert_path": "TEMPORAL_TLS_CLIENT_CERT_PATH",
    "tls_client_key_path": "TEMPORAL_TLS_CLIENT_KEY_PATH",
    "tls_server_ca_cert_path": "TEMPORAL_TLS_SERVER_CA_CERT_PATH",
    "tls_server_name": "TEMPORAL_TLS_SERVER_NAME",
    "codec_keys": "DURABLE_LOOP_CODEC_KEYS",  # ours: payload encryption (docs/security.md)
}
APP_ENV: dict[str, str] = {
    "task_queue": "DURABLE_LOOP_TASK_QUEUE",
    "db_url": "DURABLE_LOOP_DB_URL",
    "tools": "DURABLE_LOOP_TOOLS",
}


def default_db_url(state_dir: Path = STATE_DIR) -> str:
    return f"sqlite:///{(state_dir / STORE_DB).resolve()}"


def _pick(
    names: Mapping[str, str], flags: Mapping[str, object], environ: Mapping[str, str]
) -> dict[str, object]:
    """Flag values that were given, else non-empty environment values."""
    chosen: dict[str, object] = {}
    for field, env_name in names.items():
        flag = flags.get(field)
        if flag is not None:
            chosen[field] = flag
        elif environ.get(env_name, "").strip():
            chosen[field] = environ[env_name].strip()
    return chosen


class TemporalSettings(BaseModel):
    """How to reach a Temporal service (local dev server, self-hosted or Temporal Cloud)."""

    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    address: str = DEFAULT_ADDRESS
    namespace: str = DEFAULT_NAMESPACE
    api_key: str | None = Field(default=None, repr=False)
    tls: bool | None = Field(
        default=None, description="None: on when a client certificate or an API key is set"
    )
    tls_client_cert_path: Path | None = None
    tls_client_key_path: Path | None = None
    tls_server_ca_cert_path: Path | None = None
    tls_server_name: str | None = None
    codec_keys: str | None = Field(
        default=None,
        repr=False,
        description="KEY_ID:BASE64_KEY[,...]: encrypt every payload (first key encrypts)",
    )

    @field_validator("codec_keys")
    @classmethod
    def _key_ring(cls, value: str | None) -> str | None:
        if value is not None:
            from durable_loop.client.codec.keys import KeyRing

            KeyRing.parse(value)  # CodecError (a ValueError) names the bad entry, not the key
        return value

    def key_ring(self) -> KeyRing | None:
        """The payload encryption keys, or None when encryption is off."""
        if self.codec_keys is None:
            return None
        from durable_loop.client.codec.keys import KeyRing

        return KeyRing.parse(self.codec_keys)

    @field_validator("address")
    @classmethod
    def _host_port(cls, value: str) -> str:
        host, sep, port = value.strip().rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError(f"address must look like HOST:PORT, got {value!r}")
        return value.strip()

    @classmethod
    def load(cls, environ: Mapping[str, str] | None = None, **flags: object) -> TemporalSettings:
        env = os.environ if environ is None else environ
        return cls.model_validate(_pick(TEMPORAL_ENV, flags, env))

    def is_local(self) -> bool:
        host = self.address.rpartition(":")[0].strip("[]")
        return host in {"127.0.0.1", "localhost", "::1", "0.0.0.0"}

    def ui_url(self) -> str | None:
        """The dev server's Web UI (gRPC port + 1000) when the address is local."""
        if not self.is_local():
            return None
        port = int(self.address.rpartition(":")[2])
        return f"http://127.0.0.1:{port + 1000}"


class WorkerSettings(BaseModel):
    """Everything ``durable-loop worker`` needs."""

    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    temporal: TemporalSettings = TemporalSettings()
    task_queue: str = Field(default=TASK_QUEUE, min_length=1)
    db_url: str = Field(default_factory=default_db_url)
    tools: str | None = Field(
        default=None, description="module:attribute of a ToolRegistry or a zero-arg factory"
    )
    tuning: WorkerTuning = WorkerTuning()

    @field_validator("db_url")
    @classmethod
    def _known_database(cls, value: str) -> str:
        if not value.startswith(("sqlite", "postgresql")):
            raise ValueError(
                f"unsupported database URL {value!r}: use sqlite:///PATH or "
                "postgresql://USER@HOST/DB"
            )
        return value

    @field_validator("tools")
    @classmethod
    def _module_attribute(cls, value: str | None) -> str | None:
        if value is not None and (value.count(":") != 1 or value.startswith(":")):
            raise ValueError(f"tools must look like package.module:attribute, got {value!r}")
        return value

    @classmethod
    def load(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        temporal: Mapping[str, object] | None = None,
        tuning: Mapping[str, object] | None = None,
        **flags: object,
    ) -> WorkerSettings:
        env = os.environ if environ is None else environ
        values = _pick(APP_ENV, flags, env)
        values["temporal"] = _pick(TEMPORAL_ENV, temporal or {}, env)
        values["tuning"] = {k: v for k, v in (tuning or {}).items() if v is not None}
        return cls.model_validate(values)
