"""What a person's decision may carry: an approver name a reader cannot be fooled by, and a
comment of bounded size.

An approver name is printed in listings, audit rows and the model's transcript; a name
with a line break can forge a whole line (``FAKE-LINE: approved by root``), and a bidi
override can make it read as someone else. So a name is 1 to :data:`MAX_APPROVER_CHARS`
characters, none of them a control, format (bidi, zero-width), surrogate, private-use or
unassigned character, nor a line or paragraph separator. A comment reaches the model and
the audit log: at most :data:`MAX_COMMENT_CHARS` characters, and no NUL. Pure functions:
importable in the workflow sandbox and by clients that check before they send.
"""

from __future__ import annotations

import unicodedata

MAX_APPROVER_CHARS = 128
MAX_COMMENT_CHARS = 4000
UNPRINTABLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def approver_problem(approver: str) -> str | None:
    """Why ``approver`` cannot name a person (None: it can)."""
    name = approver.strip()
    if not name:
        return "the approver's identity is required"
    if len(name) > MAX_APPROVER_CHARS:
        return f"the approver's name has {len(name)} characters; the limit is {MAX_APPROVER_CHARS}"
    for char in approver:
        if unicodedata.category(char) in UNPRINTABLE_CATEGORIES:
            return (
                f"the approver's name contains U+{ord(char):04X} "
                f"({unicodedata.name(char, 'unnamed')}); names are printable characters only"
            )
    return None


def comment_problem(comment: str | None) -> str | None:
    """Why ``comment`` cannot go with a decision (None: it can)."""
    if not comment:
        return None
    if len(comment) > MAX_COMMENT_CHARS:
        return f"the comment has {len(comment)} characters; the limit is {MAX_COMMENT_CHARS}"
    if "\x00" in comment:
        return "the comment contains a NUL character"
    return None


def refused_comment(comment: str | None) -> str | None:
    """A refused decision's comment as audited: NUL written as ``\\u0000`` (a store cannot
    hold it) and cut to :data:`MAX_COMMENT_CHARS`, so a refusal cannot flood the log."""
    if not comment:
        return None
    kept = comment.replace("\x00", "\\u0000")
    return kept if len(kept) <= MAX_COMMENT_CHARS else kept[: MAX_COMMENT_CHARS - 1] + "…"
