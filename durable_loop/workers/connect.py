"""Connecting a Temporal client from :class:`TemporalSettings`."""

from __future__ import annotations

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.service import TLSConfig

from durable_loop.workers.settings import TemporalSettings


class TemporalUnreachable(ConnectionError):
    def __init__(self, address: str, namespace: str, reason: str) -> None:
        super().__init__(f"cannot reach Temporal at {address} (namespace {namespace}): {reason}")
        self.address = address
        self.namespace = namespace
        self.reason = reason


def tls_config(settings: TemporalSettings) -> bool | TLSConfig | None:
    paths = (
        settings.tls_client_cert_path,
        settings.tls_client_key_path,
        settings.tls_server_ca_cert_path,
    )
    if settings.tls is False:
        return False
    if not any(paths) and not settings.tls_server_name:
        return settings.tls  # None lets the SDK turn TLS on when an API key is set
    return TLSConfig(
        client_cert=settings.tls_client_cert_path.read_bytes()
        if settings.tls_client_cert_path
        else None,
        client_private_key=settings.tls_client_key_path.read_bytes()
        if settings.tls_client_key_path
        else None,
        server_root_ca_cert=settings.tls_server_ca_cert_path.read_bytes()
        if settings.tls_server_ca_cert_path
        else None,
        domain=settings.tls_server_name,
    )


async def connect(settings: TemporalSettings) -> Client:
    """A client using the pydantic data converter, or :class:`TemporalUnreachable`."""
    try:
        return await Client.connect(
            settings.address,
            namespace=settings.namespace,
            api_key=settings.api_key,
            tls=tls_config(settings),
            data_converter=pydantic_data_converter,
        )
    except RuntimeError as err:
        reason = " ".join(str(err).split())
        if "connect" not in reason.lower():
            raise
        raise TemporalUnreachable(settings.address, settings.namespace, reason) from None
