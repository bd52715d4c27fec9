"""Workers and CLI clients turn encryption on from DURABLE_LOOP_CODEC_KEYS."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from temporalio.converter import DefaultFailureConverterWithEncodedAttributes

from durable_loop.client.codec import AesGcmCodec, new_key
from durable_loop.client.connect import connect
from durable_loop.client.settings import TemporalSettings
from durable_loop.worker.settings import WorkerSettings

K1, K2 = new_key("k1"), new_key("k2")


async def test_connect_encrypts_when_keys_are_set(temporal_env):
    address = temporal_env.client.service_client.config.target_host
    environ = {"TEMPORAL_ADDRESS": address, "DURABLE_LOOP_CODEC_KEYS": f"{K2},{K1}"}
    client = await connect(WorkerSettings.load(environ).temporal, check_namespace=False)
    codec = client.data_converter.payload_codec
    assert isinstance(codec, AesGcmCodec) and codec.ring.active == "k2"
    assert isinstance(
        client.data_converter.failure_converter, DefaultFailureConverterWithEncodedAttributes
    )
    plain = await connect(TemporalSettings(address=address), check_namespace=False)
    assert plain.data_converter.payload_codec is None


def test_bad_keys_fail_settings_without_echoing_them():
    secret = "k1:c2VjcmV0c2VjcmV0"
    with pytest.raises(ValidationError) as err:
        WorkerSettings.load({"DURABLE_LOOP_CODEC_KEYS": secret})
    assert "CODEC_CONFIG" in str(err.value)
    assert "c2VjcmV0c2VjcmV0" not in str(err.value)
    settings = TemporalSettings(codec_keys=K1)
    assert K1.partition(":")[2] not in repr(settings)
