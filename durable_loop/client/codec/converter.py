"""The data converter every process uses: pydantic JSON, plus encryption when keyed."""

from __future__ import annotations

import dataclasses

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter, DefaultFailureConverterWithEncodedAttributes

from durable_loop.client.codec.aes import AesGcmCodec
from durable_loop.client.codec.keys import KeyRing


def data_converter(ring: KeyRing | None) -> DataConverter:
    """Without a ring: the plain pydantic converter. With one: every payload encrypted, and
    failure messages and stack traces moved into an (encrypted) payload as well, since
    they can quote user text, tool output or a provider's reply."""
    if ring is None:
        return pydantic_data_converter
    return dataclasses.replace(
        pydantic_data_converter,
        payload_codec=AesGcmCodec(ring),
        failure_converter_class=DefaultFailureConverterWithEncodedAttributes,
    )
