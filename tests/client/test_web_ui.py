"""Web UI links come from the UI address the server was started with, or from the
configured one; never from the gRPC port."""

from __future__ import annotations

from pathlib import Path

from durable_loop.client.settings import TemporalSettings
from durable_loop.client.web_ui import forget_web_ui, record_web_ui, recorded_web_ui


def test_a_recorded_ui_port_is_used_for_its_server_only(tmp_path: Path):
    record_web_ui("127.0.0.1:17433", "http://127.0.0.1:17434", tmp_path)
    assert TemporalSettings(address="127.0.0.1:17433").ui_url(tmp_path) == "http://127.0.0.1:17434"
    assert TemporalSettings(address="localhost:17433").ui_url(tmp_path) == "http://127.0.0.1:17434"
    assert TemporalSettings(address="127.0.0.1:7233").ui_url(tmp_path) is None
    assert TemporalSettings(address="temporal.example:17433").ui_url(tmp_path) is None


def test_without_a_record_or_setting_there_is_no_link(tmp_path: Path):
    assert TemporalSettings(address="127.0.0.1:17433").ui_url(tmp_path) is None


def test_the_configured_ui_wins(tmp_path: Path):
    record_web_ui("127.0.0.1:7233", "http://127.0.0.1:8233", tmp_path)
    env = {"TEMPORAL_ADDRESS": "127.0.0.1:7233", "DURABLE_LOOP_WEB_UI_URL": "https://ui.example/"}
    assert TemporalSettings.load(env).ui_url(tmp_path) == "https://ui.example"


def test_forgetting_leaves_another_servers_record(tmp_path: Path):
    record_web_ui("127.0.0.1:7233", "http://127.0.0.1:9000", tmp_path)
    forget_web_ui("127.0.0.1:17433", tmp_path)
    assert recorded_web_ui("127.0.0.1:7233", tmp_path) == "http://127.0.0.1:9000"
    forget_web_ui("127.0.0.1:7233", tmp_path)
    assert recorded_web_ui("127.0.0.1:7233", tmp_path) is None


def test_an_unreadable_record_is_no_link(tmp_path: Path):
    (tmp_path / "web-ui.json").write_text("{not json")
    assert recorded_web_ui("127.0.0.1:7233", tmp_path) is None
