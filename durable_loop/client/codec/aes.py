"""AES-GCM payload codec: each payload becomes ``binary/encrypted`` with its key id.

The whole serialized payload (metadata and data) is encrypted, so the original encoding
and message type are hidden too. The key id is bound as associated data: a payload
relabelled with another key id fails to decrypt instead of decrypting wrongly.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from google.protobuf.message import DecodeError
from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec

from durable_loop.client.codec.keys import CodecError, KeyRing
from durable_loop.core.errors import ErrorCode
from durable_loop.core.extras import import_extra

ENCODING = b"binary/encrypted"
KEY_ID_METADATA = "encryption-key-id"
NONCE_BYTES = 12


class AesGcmCodec(PayloadCodec):
    def __init__(self, ring: KeyRing) -> None:
        self.ring = ring
        self._invalid_tag: type[Exception] = import_extra(
            "cryptography.exceptions", "the payload codec"
        ).InvalidTag
        self._active = ring.cipher(ring.active)
        self._active_id = ring.active.encode()

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self.encrypt(p) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self.decrypt(p) for p in payloads]

    def encrypt(self, payload: Payload) -> Payload:
        nonce = os.urandom(NONCE_BYTES)
        sealed = self._active.encrypt(nonce, payload.SerializeToString(), self._active_id)
        return Payload(
            metadata={"encoding": ENCODING, KEY_ID_METADATA: self._active_id},
            data=nonce + sealed,
        )

    def decrypt(self, payload: Payload) -> Payload:
        """Payloads that are not encrypted pass through unchanged (encryption turned on
        for a namespace with older, plain histories)."""
        if payload.metadata.get("encoding") != ENCODING:
            return payload
        raw_id = payload.metadata.get(KEY_ID_METADATA)
        if not raw_id:
            raise CodecError(ErrorCode.CODEC_BAD_PAYLOAD, "encrypted payload without a key id")
        key_id = raw_id.decode("utf-8", errors="replace")
        cipher = self.ring.cipher(key_id)
        nonce, sealed = payload.data[:NONCE_BYTES], payload.data[NONCE_BYTES:]
        try:
            plain = cipher.decrypt(nonce, sealed, raw_id)
        except self._invalid_tag:
            raise CodecError(
                ErrorCode.CODEC_DECRYPT_FAILED, f"payload does not decrypt with key {key_id!r}"
            ) from None
        try:
            return Payload.FromString(plain)
        except DecodeError:
            raise CodecError(
                ErrorCode.CODEC_BAD_PAYLOAD, "decrypted bytes are not a payload"
            ) from None
