"""Connecting a Temporal client from :class:`TemporalSettings`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING

from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
from temporalio.client import Client, Interceptor
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter
from temporalio.service import RPCError, RPCStatusCode, TLSConfig

from durable_loop.client.settings import TemporalSettings
from durable_loop.core.errors import DurableLoopError, ErrorCode

if TYPE_CHECKING:
    from durable_loop.client.codec.keys import KeyRing


class TemporalUnreachable(DurableLoopError, ConnectionError):
    def __init__(self, address: str, namespace: str, reason: str) -> None:
        super().__init__(
            ErrorCode.TEMPORAL_UNREACHABLE,
            f"cannot reach Temporal at {address} (namespace {namespace}): {reason}",
        )
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


async def connect(
    settings: TemporalSettings,
    *,
    check_namespace: bool = True,
    interceptors: Sequence[Interceptor] | None = None,
) -> Client:
    """A client using the pydantic data converter, or :class:`TemporalUnreachable`.

    ``interceptors`` default to :class:`TraceContextPropagation` (trace context from the
    caller into the session); pass ``[]`` for none. The namespace is described once up
    front, so a wrong name fails here with ``NOT_FOUND`` instead of later inside a
    worker's background validation.
    """
    if interceptors is None:
        # imported here: OpenTelemetry costs a short-lived caller (a CLI query) ~0.1 s
        from durable_loop.client.tracing import TraceContextPropagation

        interceptors = [TraceContextPropagation()]
    chosen: list[Interceptor] = list(interceptors)
    client = await _connect(settings, chosen)
    if check_namespace:
        try:
            await client.workflow_service.describe_namespace(
                DescribeNamespaceRequest(namespace=settings.namespace),
                timeout=timedelta(seconds=10),
            )
        except RPCError as err:
            if err.status != RPCStatusCode.UNIMPLEMENTED:  # the time-skipping test server
                raise
    return client


def data_converter_for(ring: KeyRing | None) -> DataConverter:
    """Pydantic JSON; encrypted when keys are given (DURABLE_LOOP_CODEC_KEYS; needs
    ``cryptography``, the ``crypto`` extra), which every process talking to the same
    sessions must share. :func:`connect` and the worker plugin both take it from here."""
    if ring is None:
        return pydantic_data_converter
    from durable_loop.client.codec.converter import data_converter

    return data_converter(ring)


async def _connect(settings: TemporalSettings, interceptors: list[Interceptor]) -> Client:
    try:
        return await Client.connect(
            settings.address,
            namespace=settings.namespace,
            api_key=settings.api_key,
            tls=tls_config(settings),
            data_converter=data_converter_for(settings.key_ring()),
            interceptors=interceptors,
        )
    except RuntimeError as err:
        reason = " ".join(str(err).split())
        if "connect" not in reason.lower():
            raise
        raise TemporalUnreachable(settings.address, settings.namespace, reason) from None
