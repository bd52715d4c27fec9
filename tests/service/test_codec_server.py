"""The codec server: decodes and encodes for a valid bearer token, refuses otherwise, and
answers CORS preflights only for the configured Web UI origin."""

from __future__ import annotations

import base64

import httpx
import pytest
from google.protobuf.json_format import MessageToDict
from temporalio.api.common.v1 import Payloads
from temporalio.contrib.pydantic import pydantic_data_converter

from durable_loop.cli.commands.codec_server import build_app
from durable_loop.cli.errors import CliError
from durable_loop.client.codec import AesGcmCodec, CodecError, KeyRing, new_key
from durable_loop.core.contracts import UserMessage
from durable_loop.service.auth import TokenBook
from durable_loop.service.codec_server import create_codec_app

K1, K2 = new_key("k1"), new_key("k2")
TOKEN = "codec-token-alice-0123"
UI = "http://localhost:8233"


def client_for(ring: str = K1) -> httpx.AsyncClient:
    app = create_codec_app(
        AesGcmCodec(KeyRing.parse(ring)), TokenBook({TOKEN: "alice"}), allowed_origins=[UI]
    )
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://codec")


async def sealed_body(text: str, ring: str = K1) -> dict:
    plain = pydantic_data_converter.payload_converter.to_payloads([UserMessage(text=text)])
    sealed = await AesGcmCodec(KeyRing.parse(ring)).encode(plain)
    return MessageToDict(Payloads(payloads=sealed))


def auth(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "X-Namespace": "default"}


@pytest.mark.parametrize("path", ["/decode", "/default/decode"])
async def test_decodes_for_a_valid_token(path):
    body = await sealed_body("secret question")
    async with client_for() as http:
        response = await http.post(path, json=body, headers=auth())
    assert response.status_code == 200, response.text
    [payload] = response.json()["payloads"]
    assert base64.b64decode(payload["metadata"]["encoding"]) == b"json/plain"
    assert b"secret question" in base64.b64decode(payload["data"])


async def test_encode_then_decode_round_trips():
    plain = pydantic_data_converter.payload_converter.to_payloads([UserMessage(text="hi")])
    async with client_for() as http:
        encoded = await http.post(
            "/encode", json=MessageToDict(Payloads(payloads=plain)), headers=auth()
        )
        assert encoded.status_code == 200
        [sealed] = encoded.json()["payloads"]
        assert base64.b64decode(sealed["metadata"]["encoding"]) == b"binary/encrypted"
        decoded = await http.post("/decode", json=encoded.json(), headers=auth())
    assert decoded.json() == MessageToDict(Payloads(payloads=plain))


@pytest.mark.parametrize(
    "headers",
    [{}, auth("wrong-token-xyz-987"), {"Authorization": TOKEN}, {"Authorization": "Basic eA=="}],
)
async def test_refuses_without_a_valid_token(headers):
    body = await sealed_body("secret question")
    async with client_for() as http:
        response = await http.post("/decode", json=body, headers=headers)
    assert response.status_code == 401
    assert response.json()["code"] == "UNAUTHENTICATED"
    assert "secret question" not in response.text


async def test_bad_bodies_and_unknown_keys_get_coded_errors():
    async with client_for() as http:
        garbage = await http.post("/decode", content=b"{not json", headers=auth())
        wrong_shape = await http.post("/decode", json={"payloads": "x"}, headers=auth())
        other_key = await http.post("/decode", json=await sealed_body("x", K2), headers=auth())
        get = await http.get("/decode", headers=auth())
    assert (garbage.status_code, garbage.json()["code"]) == (400, "CODEC_BAD_REQUEST")
    assert (wrong_shape.status_code, wrong_shape.json()["code"]) == (400, "CODEC_BAD_REQUEST")
    assert (other_key.status_code, other_key.json()["code"]) == (422, "CODEC_KEY_UNKNOWN")
    assert get.status_code == 405


async def test_cors_preflight_admits_only_the_ui_origin():
    preflight = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,x-namespace,authorization",
    }
    async with client_for() as http:
        ui = await http.options("/decode", headers={**preflight, "Origin": UI})
        other = await http.options(
            "/decode", headers={**preflight, "Origin": "https://evil.example"}
        )
        actual = await http.post(
            "/decode", json=await sealed_body("x"), headers={**auth(), "Origin": UI}
        )
    assert ui.status_code == 200
    assert ui.headers["access-control-allow-origin"] == UI
    assert "authorization" in ui.headers["access-control-allow-headers"].lower()
    assert other.status_code == 400
    assert "access-control-allow-origin" not in other.headers
    assert actual.headers["access-control-allow-origin"] == UI


def test_the_command_needs_keys_and_tokens():
    with pytest.raises(CodecError) as no_keys:
        build_app({})
    assert no_keys.value.code == "CODEC_CONFIG"
    with pytest.raises(CliError) as no_tokens:
        build_app({"DURABLE_LOOP_CODEC_KEYS": K1})
    assert no_tokens.value.code == "NO_CODEC_TOKENS"
    app = build_app({"DURABLE_LOOP_CODEC_KEYS": K1, "DURABLE_LOOP_CODEC_TOKENS": f"{TOKEN}=alice"})
    assert app.routes
