"""The key ring: named AES keys parsed from ``id:base64key,id:base64key`` (first = active).

Error messages name key ids and positions, never key material.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from durable_loop.core.errors import DurableLoopError, ErrorCode
from durable_loop.core.extras import import_extra

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

KEY_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
KEY_SIZES = (16, 24, 32)


class CodecError(DurableLoopError, ValueError):
    """A codec failure with a stable code: CODEC_CONFIG, CODEC_KEY_UNKNOWN,
    CODEC_DECRYPT_FAILED or CODEC_BAD_PAYLOAD."""

    code: ErrorCode
    show_code = True


@dataclass(frozen=True)
class KeyRing:
    """Keys by id; ``active`` encrypts, all of them decrypt."""

    active: str
    keys: dict[str, bytes] = field(repr=False)

    def __post_init__(self) -> None:
        if self.active not in self.keys:
            raise CodecError(
                ErrorCode.CODEC_CONFIG, f"the active key {self.active!r} is not in the ring"
            )
        for key_id, key in self.keys.items():
            if not KEY_ID.match(key_id):
                raise CodecError(
                    ErrorCode.CODEC_CONFIG, f"key id {key_id!r} must match {KEY_ID.pattern}"
                )
            if len(key) not in KEY_SIZES:
                raise CodecError(
                    ErrorCode.CODEC_CONFIG,
                    f"key {key_id!r} is {len(key)} bytes; AES-GCM needs 16, 24 or 32",
                )

    @classmethod
    def parse(cls, text: str) -> KeyRing:
        """``k2:<base64>,k1:<base64>``: the first key is the active one."""
        keys: dict[str, bytes] = {}
        order: list[str] = []
        for position, item in enumerate(part.strip() for part in text.split(",")):
            if not item:
                continue
            key_id, sep, encoded = item.partition(":")
            key_id = key_id.strip()
            if not sep or not key_id or not encoded.strip():
                raise CodecError(
                    ErrorCode.CODEC_CONFIG, f"entry {position + 1} is not KEY_ID:BASE64_KEY"
                )
            if key_id in keys:
                raise CodecError(ErrorCode.CODEC_CONFIG, f"key id {key_id!r} is listed twice")
            try:
                keys[key_id] = base64.b64decode(encoded.strip(), validate=True)
            except (binascii.Error, ValueError):
                raise CodecError(
                    ErrorCode.CODEC_CONFIG, f"key {key_id!r} is not valid base64"
                ) from None
            order.append(key_id)
        if not order:
            raise CodecError(ErrorCode.CODEC_CONFIG, "no keys: expected KEY_ID:BASE64_KEY[,...]")
        return cls(active=order[0], keys=keys)

    def cipher(self, key_id: str) -> AESGCM:
        key = self.keys.get(key_id)
        if key is None:
            known = ", ".join(sorted(self.keys))
            raise CodecError(
                ErrorCode.CODEC_KEY_UNKNOWN,
                f"payload was encrypted with key {key_id!r}, which this process does not have "
                f"(known: {known}); add it to DURABLE_LOOP_CODEC_KEYS after the active key",
            )
        aead = import_extra("cryptography.hazmat.primitives.ciphers.aead", "the payload codec")
        cipher: AESGCM = aead.AESGCM(key)
        return cipher


def new_key(key_id: str) -> str:
    """A fresh ``id:base64`` entry holding a random 256-bit key."""
    if not KEY_ID.match(key_id):
        raise CodecError(ErrorCode.CODEC_CONFIG, f"key id {key_id!r} must match {KEY_ID.pattern}")
    return f"{key_id}:{base64.b64encode(os.urandom(32)).decode()}"
