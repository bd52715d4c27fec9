"""Text shown to a person, with every character that could hide or fake something made
visible as an escape.

The model writes tool-call arguments and call ids, and people write approver names and
comments; all of them are shown to people who decide on what they read (the CLI, the
approval page, the trace). Raw, a CR/LF in an approver name prints a forged line of its
own (``FAKE-LINE: approved by root``), an ESC starts a terminal control sequence, and a
bidi control such as U+202E RIGHT-TO-LEFT OVERRIDE reorders what follows, so ``"to":
"acme"`` can be made to read as something else; zero-width characters make two different
names look alike. So before any such value reaches a person it goes through
:func:`visible` (or :func:`visible_json` for a JSON value).

The convention is JSON's string escape: ``\\n``, ``\\r`` and ``\\t`` by name, every other
hidden character as ``\\u`` and four lowercase hex digits (a character beyond U+FFFF as
its UTF-16 surrogate pair, ``\\udb40\\udc01``, as JSON writes it). Hidden are the Unicode
categories

* ``Cc``: control characters, C0 (TAB, CR and LF too: every field shown is one line), DEL
  and C1 (including U+0085 NEXT LINE);
* ``Cf``: format characters, invisible by design: bidi embeddings, overrides and isolates
  (U+202A–U+202E, U+2066–U+2069), marks (U+200E, U+200F, U+061C), zero-width space and
  joiners (U+200B–U+200D), the BOM / zero-width no-break space (U+FEFF), soft hyphen,
  tag characters (U+E0000–U+E007F, which can smuggle text a person cannot see); a ZWNJ in
  Persian text shows as ``\\u200c`` too, the price of showing every invisible difference;
* ``Zl``, ``Zp``: U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR, which break lines;
* ``Cs``: lone surrogates, which cannot even be encoded as UTF-8.

One exception keeps emoji intact: a ZERO WIDTH JOINER (U+200D) inside an emoji sequence
(woman technologist is U+1F469 U+200D U+1F4BB; the rainbow flag U+1F3F3 U+FE0F U+200D
U+1F308): a symbol, optionally a variation selector or skin tone, the joiner, a symbol. It
is left alone, since there it joins a picture and cannot reorder or break a line.
Everything else, "café", "東京", emoji and other ordinary non-ASCII text, is unchanged.

A backslash the text really had is left as it is too (a Windows path stays readable), so
an escape in the output may also be text that only looked like one; what matters is that
nothing is hidden. :func:`visible_json`'s output is JSON that parses back to the very
same value, escapes included.

Pure: no I/O, importable in the workflow sandbox.
"""

from __future__ import annotations

import json
import unicodedata

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Unicode general categories :func:`visible` escapes."""

ZWJ = "\u200d"
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_EMOJI_TAIL = range(0x1F3FB, 0x1F400)  # skin tone modifiers (category Sk)


def hidden(char: str) -> bool:
    """Whether one character is escaped by :func:`visible` (the ZWJ-in-emoji exception
    aside, which needs the neighbours)."""
    return unicodedata.category(char) in HIDDEN_CATEGORIES


def escape_char(char: str) -> str:
    """One character as its JSON-style escape: ``\\n``, ``\\u202e``, ``\\udb40\\udc01``."""
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def visible(text: str) -> str:
    """``text`` with every hidden character (control, format, line/paragraph separator,
    lone surrogate) written as its escape, so that it shows as one honest line: ``"a\\nb"``
    -> ``a\\nb``, ``"\\u202e"`` -> ``\\u202e``. Ordinary text, non-ASCII included, is
    returned unchanged."""
    return _escaped(text, keep="")


def visible_json(value: object, *, indent: int | None = None, sort_keys: bool = False) -> str:
    """``value`` as JSON for a person: ``json.dumps(..., ensure_ascii=False)`` (so "café"
    stays "café") with every hidden character escaped. JSON already escapes C0 controls in
    strings; DEL, C1, format characters and line separators it leaves raw, and those are
    escaped here (with ``indent``, only the layout's newlines stay raw). The result parses
    back to ``value``: an escape in a JSON string means the character it names, so a
    person who edits the shown JSON and leaves a field alone sends the same value back."""
    text = json.dumps(value, ensure_ascii=False, indent=indent, sort_keys=sort_keys)
    # every raw control character json.dumps writes is a layout newline: the C0 controls
    # in strings it escapes itself, and the rest can only be inside a string
    return _escaped(text, keep="\n")


def _escaped(text: str, keep: str) -> str:
    if text.isprintable():  # no Cc, Cf, Cs, Zl, Zp (nor other unprintables): fast path
        return text
    out: list[str] = []
    for index, char in enumerate(text):
        if char in keep or not hidden(char) or (char == ZWJ and _joins_emoji(text, index)):
            out.append(char)
        else:
            out.append(escape_char(char))
    return "".join(out)


def _joins_emoji(text: str, index: int) -> bool:
    """Whether the ZWJ at ``index`` sits inside an emoji sequence: a symbol (So) before it,
    optionally followed by a variation selector or skin tone, and a symbol after it."""
    before = index - 1
    while before >= 0 and (text[before] == "\ufe0f" or ord(text[before]) in _EMOJI_TAIL):
        before -= 1
    after = index + 1
    return (
        before >= 0
        and after < len(text)
        and unicodedata.category(text[before]) == "So"
        and unicodedata.category(text[after]) == "So"
    )
