"""The key ring and the AES-GCM codec: round trips, rotation by key id, coded failures
that never quote key material."""

from __future__ import annotations

import base64

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import pydantic_data_converter

from durable_loop.client.codec import (
    ENCODING,
    KEY_ID_METADATA,
    AesGcmCodec,
    CodecError,
    KeyRing,
    new_key,
)
from durable_loop.core.contracts import UserMessage

K1, K2 = new_key("k1"), new_key("k2")


def plain(text: str) -> Payload:
    return pydantic_data_converter.payload_converter.to_payloads([UserMessage(text=text)])[0]


def secret_of(entry: str) -> str:
    return entry.partition(":")[2]


async def test_round_trip_hides_data_metadata_and_type():
    codec = AesGcmCodec(KeyRing.parse(K1))
    original = plain("the user's secret text")
    [sealed] = await codec.encode([original])
    assert sealed.metadata["encoding"] == ENCODING
    assert sealed.metadata[KEY_ID_METADATA] == b"k1"
    assert set(sealed.metadata) == {"encoding", KEY_ID_METADATA}
    assert b"secret text" not in sealed.SerializeToString()
    assert b"json/plain" not in sealed.SerializeToString()
    [opened] = await codec.decode([sealed])
    assert opened == original


async def test_same_payload_encrypts_differently_each_time():
    codec = AesGcmCodec(KeyRing.parse(K1))
    first, second = await codec.encode([plain("x"), plain("x")])
    assert first.data != second.data


async def test_rotation_old_payloads_decrypt_new_ones_use_the_new_key():
    old = AesGcmCodec(KeyRing.parse(K1))
    [under_k1] = await old.encode([plain("before rotation")])
    rotated = AesGcmCodec(KeyRing.parse(f"{K2},{K1}"))
    [under_k2] = await rotated.encode([plain("after rotation")])
    assert under_k2.metadata[KEY_ID_METADATA] == b"k2"
    decoded = await rotated.decode([under_k1, under_k2])
    assert decoded == [plain("before rotation"), plain("after rotation")]
    with pytest.raises(CodecError) as err:
        await AesGcmCodec(KeyRing.parse(K2)).decode([under_k1])
    assert err.value.code == "CODEC_KEY_UNKNOWN"
    assert secret_of(K1) not in str(err.value) and secret_of(K2) not in str(err.value)


async def test_tampering_and_relabelling_fail_with_a_code():
    ring = KeyRing.parse(f"{K1},{K2}")
    codec = AesGcmCodec(ring)
    [sealed] = await codec.encode([plain("x")])
    flipped = Payload(
        metadata=dict(sealed.metadata), data=sealed.data[:-1] + bytes([sealed.data[-1] ^ 1])
    )
    relabelled = Payload(metadata={**sealed.metadata, KEY_ID_METADATA: b"k2"}, data=sealed.data)
    for bad in (flipped, relabelled):
        with pytest.raises(CodecError) as err:
            await codec.decode([bad])
        assert err.value.code == "CODEC_DECRYPT_FAILED"
    no_id = Payload(metadata={"encoding": ENCODING}, data=sealed.data)
    with pytest.raises(CodecError) as err:
        await codec.decode([no_id])
    assert err.value.code == "CODEC_BAD_PAYLOAD"


async def test_plain_payloads_pass_through_decode():
    codec = AesGcmCodec(KeyRing.parse(K1))
    assert await codec.decode([plain("old history")]) == [plain("old history")]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "no keys"),
        ("k1", "entry 1"),
        ("k1:", "entry 1"),
        ("k1:not base64!!", "not valid base64"),
        (f"k1:{base64.b64encode(b'short').decode()}", "5 bytes"),
        (f"{K1},{K1}", "listed twice"),
        (f"bad id:{secret_of(K1)}", "must match"),
    ],
)
def test_bad_key_lists_fail_with_a_code_and_no_key_material(text, needle):
    with pytest.raises(CodecError) as err:
        KeyRing.parse(text)
    assert err.value.code == "CODEC_CONFIG"
    assert needle in err.value.message
    assert secret_of(K1) not in str(err.value)


def test_key_ring_repr_hides_keys():
    ring = KeyRing.parse(f"{K2},{K1}")
    assert ring.active == "k2" and set(ring.keys) == {"k1", "k2"}
    assert secret_of(K1) not in repr(ring) and secret_of(K2) not in repr(ring)
