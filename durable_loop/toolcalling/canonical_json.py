"""Canonical JSON: one byte string per value, so hashes and fingerprints are stable."""

from __future__ import annotations

import hashlib
import json

from pydantic import JsonValue


def canonical_dumps(value: JsonValue) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", errors="surrogatepass"))


def arguments_fingerprint(raw_arguments: str) -> tuple[bool, str]:
    """Return (is_valid_json_object, sha256 of canonical arguments).

    Valid JSON is canonicalised so that key order and whitespace do not make two equal
    calls look different; invalid JSON is hashed as emitted.
    """
    try:
        parsed = json.loads(raw_arguments) if raw_arguments.strip() else {}
    except (ValueError, RecursionError):
        return False, sha256_hex(raw_arguments)
    if not isinstance(parsed, dict):
        return False, sha256_hex(raw_arguments)
    return True, sha256_hex(canonical_dumps(parsed))
