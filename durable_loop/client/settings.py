"""How to reach Temporal: the connection settings, from flags first, then the environment
variables the Temporal CLI reads (so one shell environment serves both tools), then defaults."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, field_validator

from durable_loop.client.web_ui import WEB_UI_ENV, recorded_web_ui
from durable_loop.core.constants import DEFAULT_ADDRESS, DEFAULT_NAMESPACE, STATE_DIR

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
    "web_ui_url": WEB_UI_ENV,  # ours: links to the Web UI
}


def pick(
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
    web_ui_url: str | None = Field(
        default=None, description="the server's Web UI, for links (http://HOST:PORT)"
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
        return cls.model_validate(pick(TEMPORAL_ENV, flags, env))

    def ui_url(self, state_dir: Path = STATE_DIR) -> str | None:
        """The Web UI: as configured, else as ``durable-loop server`` recorded it for this
        address, else unknown (no link rather than a guessed one)."""
        if self.web_ui_url is not None:
            return self.web_ui_url.rstrip("/")
        return recorded_web_ui(self.address, state_dir)
