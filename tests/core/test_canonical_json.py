"""Canonical JSON and argument fingerprints."""

from __future__ import annotations

import pytest

from durable_loop.core.canonical_json import (
    arguments_fingerprint,
    canonical_dumps,
    sha256_hex,
    utf8_len,
)


def test_canonical_dumps_sorts_keys_and_keeps_unicode():
    assert canonical_dumps({"b": [1, {"d": 1, "c": 2}], "a": "ü"}) == (
        '{"a":"ü","b":[1,{"c":2,"d":1}]}'
    )


def test_equal_objects_share_a_fingerprint_whatever_the_layout():
    first = arguments_fingerprint('{"a": 1, "b": [1, 2]}')
    second = arguments_fingerprint('{\n  "b": [1,2],\n  "a": 1\n}')
    assert first == second and first[0] is True
    assert first[1] == sha256_hex('{"a":1,"b":[1,2]}')


def test_different_values_differ():
    assert arguments_fingerprint('{"a": 1}')[1] != arguments_fingerprint('{"a": 2}')[1]


def test_blank_arguments_are_the_empty_object():
    assert arguments_fingerprint("") == arguments_fingerprint("{}") == arguments_fingerprint(" ")


@pytest.mark.parametrize("raw", ['{"a": ', "[1, 2]", '"text"', "null", "nan", "{'a': 1}"])
def test_non_objects_are_invalid_and_hashed_as_emitted(raw):
    valid, digest = arguments_fingerprint(raw)
    assert valid is False and digest == sha256_hex(raw)


def test_deeply_nested_input_does_not_crash():
    raw = "[" * 100_000 + "]" * 100_000
    assert arguments_fingerprint(raw)[0] is False


def test_utf8_len_counts_bytes():
    assert utf8_len("aé€😀") == 1 + 2 + 3 + 4


def test_largest_string_points_at_the_longest_value():
    from durable_loop.core.canonical_json import largest_string

    raw = '{"ops": [{"op": "add", "path": "/a~b/c", "value": "' + "y" * 40 + '"}], "k/x": "zz"}'
    assert largest_string(raw) == ("/ops/0/value", 40)
    assert largest_string('{"a/b": "long text"}') == ("/a~1b", 9)
    assert largest_string("not json") is None
    assert largest_string('{"n": 1}') is None


def test_largest_string_path_is_safe_for_history():
    import json

    from durable_loop.core.canonical_json import largest_string

    path, length = largest_string('{"k\\udfff": "' + "v" * 10 + '"}')
    assert path == "/k?" and length == 10
    path.encode("utf-8")
    long_key = "x" * 500
    path, _ = largest_string(json.dumps({long_key: "value"}))
    assert len(path) == 120 and path.endswith("…")
