"""Sessions as data: fork a session at a turn, export one as a portable bundle, import a
bundle as a new session (docs/sessions-as-data.md)."""

from durable_loop.client.session_data.bundle import FORMAT_VERSION, SessionBundle
from durable_loop.client.session_data.client import SessionData

__all__ = ["FORMAT_VERSION", "SessionBundle", "SessionData"]
