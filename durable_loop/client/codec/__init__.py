"""Optional payload encryption: AES-GCM over every Temporal payload, keys by id.

``DURABLE_LOOP_CODEC_KEYS="k2:<base64>,k1:<base64>"`` in a process's environment turns it
on (``workers/settings.py`` reads it; ``workers/connect.py`` builds the client). The first
key encrypts; every key listed decrypts, by the key id stored in each payload's metadata,
so keys rotate without re-encrypting history. ``server.py`` is the codec server the
Temporal Web UI and CLI call to decode for authorised users. See ``docs/security.md``.
"""

from durable_loop.client.codec.aes import ENCODING, KEY_ID_METADATA, AesGcmCodec
from durable_loop.client.codec.converter import data_converter
from durable_loop.client.codec.keys import CodecError, KeyRing, new_key

__all__ = [
    "ENCODING",
    "KEY_ID_METADATA",
    "AesGcmCodec",
    "CodecError",
    "KeyRing",
    "data_converter",
    "new_key",
]
