"""What a person reads shows every hidden character (issue 28): no forged lines, no bidi
spoofing, no invisible differences; ordinary non-ASCII text and emoji stay as they are."""

from __future__ import annotations

import json

import pytest

from durable_loop.core.visible_text import escape_char, visible, visible_json


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("alice\r\nFAKE-LINE: approved by root", "alice\\r\\nFAKE-LINE: approved by root"),
        ("tab\there", "tab\\there"),
        ("bell\x07", "bell\\u0007"),
        ("nul\x00", "nul\\u0000"),
        ("esc\x1b[31mred", "esc\\u001b[31mred"),
        ("del\x7f", "del\\u007f"),
        ("next\x85line", "next\\u0085line"),  # C1 NEXT LINE
        ("csi\x9b", "csi\\u009b"),  # C1 CONTROL SEQUENCE INTRODUCER
        ("acme\u202egnp.exe", "acme\\u202egnp.exe"),  # RIGHT-TO-LEFT OVERRIDE
        ("\u2066isolate\u2069", "\\u2066isolate\\u2069"),
        ("\u202a\u202b\u202c\u202d", "\\u202a\\u202b\\u202c\\u202d"),
        ("ad\u200bmin", "ad\\u200bmin"),  # zero-width space
        ("ad\u200cmin\u200dx", "ad\\u200cmin\\u200dx"),  # ZWNJ, ZWJ between letters
        ("\u200e\u200f\u061c", "\\u200e\\u200f\\u061c"),  # directional marks
        ("\ufeffbom", "\\ufeffbom"),
        ("soft\u00adhyphen", "soft\\u00adhyphen"),
        ("line\u2028para\u2029", "line\\u2028para\\u2029"),
        ("lone \ud800", "lone \\ud800"),
        ("tag\U000e0041", "tag\\udb40\\udc41"),  # tag characters smuggle invisible text
    ],
)
def test_hidden_characters_are_shown_as_escapes(raw: str, shown: str) -> None:
    assert visible(raw) == shown
    assert visible(raw).isprintable()


@pytest.mark.parametrize(
    "text",
    [
        "café",
        "東京",
        "Ünïcödé straße",
        "مرحبا",  # right-to-left text itself is fine; only the controls are escaped
        "emoji 🎉👍🏽",
        "👩\u200d💻 and 🏳\ufe0f\u200d🌈 and 👨\u200d👩\u200d👧",  # ZWJ joins emoji: kept
        "👋🏽\u200d🦰",  # ZWJ after a skin tone, before a hair component
        "C:\\temp\\new",  # a backslash the text had stays (readable paths)
        "non\u00a0breaking space",
        "",
    ],
)
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert visible(text) == text


def test_a_zwj_not_inside_an_emoji_sequence_is_shown() -> None:
    assert visible("\u200d🎉") == "\\u200d🎉"
    assert visible("🎉\u200d") == "🎉\\u200d"
    assert visible("🎉\u200da") == "🎉\\u200da"


def test_a_forged_line_stays_on_its_line() -> None:
    shown = visible("alice\nFAKE-LINE: approved by root")
    assert shown.splitlines() == [shown]
    assert "\n" not in shown


def test_escape_char_uses_json_escapes() -> None:
    assert [escape_char(c) for c in "\n\r\t"] == ["\\n", "\\r", "\\t"]
    assert escape_char("\u202e") == "\\u202e"
    tag = "\U000e0041"
    assert json.loads('"' + escape_char(tag) + '"') == tag


ADVERSARIAL = {
    "to": "acme\u202e1337",
    "memo": "line1\nline2\r\x07\x00\x7f\x85",
    "hidden": ["\u200b", "\u2066x\u2069", "\ufeff", "\u2028", "\U000e0041"],
    "ok": "café 東京 🎉 👩\u200d💻",
    "n\u202eested": {"k": 1.5, "b": True, "z": None},
}


@pytest.mark.parametrize("indent", [None, 2])
def test_visible_json_shows_escapes_and_parses_back_to_the_same_value(indent: int | None) -> None:
    shown = visible_json(ADVERSARIAL, indent=indent, sort_keys=True)
    assert json.loads(shown) == ADVERSARIAL
    assert '"acme\\u202e1337"' in shown
    assert '"n\\u202eested"' in shown
    assert "line1\\nline2\\r\\u0007\\u0000\\u007f\\u0085" in shown
    assert '"\\u200b"' in shown and '"\\u2066x\\u2069"' in shown and '"\\u2028"' in shown
    assert "café 東京 🎉 👩\u200d💻" in shown
    lines = shown.splitlines()
    assert all(line.isprintable() or "\u200d" in line for line in lines)
    layout = json.dumps(ADVERSARIAL, indent=indent, sort_keys=True)  # C0 escaped, no U+2028
    assert len(lines) == len(layout.split("\n"))


def test_visible_json_of_plain_values() -> None:
    assert visible_json({"amount": 250, "to": "acme"}) == '{"amount": 250, "to": "acme"}'
    assert visible_json("\u202e") == '"\\u202e"'
    assert visible_json(["café"]) == '["café"]'
