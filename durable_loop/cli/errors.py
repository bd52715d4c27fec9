"""Known failures of the command line, each turned into one line with a code and a hint.

Commands raise :class:`CliError` for their own checks; :func:`explain` maps exceptions
from the libraries underneath. Anything it does not know keeps its traceback, on purpose.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from contextlib import contextmanager

import pydantic

from durable_loop.cli.binaries import MissingBinary
from durable_loop.cli.codes import CliCode
from durable_loop.core.errors import ConfigError, DurableLoopError, ErrorCode, coded_text
from durable_loop.core.extras import MissingExtra
from durable_loop.core.validation_text import fields_text

EXIT_BAD_INPUT = 2
SERVER_HINT = "start one with `durable-loop server` or set TEMPORAL_ADDRESS"


class CliError(DurableLoopError):
    """A failure a user can fix; ``code`` is stable, ``message`` says what to do."""

    show_code = True


def one_line(text: str) -> str:
    return " ".join(text.split())


def _text(message: str) -> str:
    return one_line(message).rstrip(".")


def validation_message(err: pydantic.ValidationError) -> str:
    return fields_text(err.errors(), root=err.title)


@contextmanager
def reading_session(session_id: str, namespace: str, *, store_hint: str = "") -> Iterator[None]:
    """Around reading a session from history and the store: no store file and no such
    workflow become STORE_NOT_FOUND and SESSION_NOT_FOUND."""
    from temporalio.service import RPCError, RPCStatusCode

    from durable_loop.client.trace.fetch import StoreMissing

    try:
        yield
    except StoreMissing as err:
        raise CliError(
            ErrorCode.STORE_NOT_FOUND,
            f"no transcript store at {err}: pass --db-url (or set DURABLE_LOOP_DB_URL) to the "
            f"worker's database{store_hint}",
        ) from None
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND and not namespace_missing(err.message):
            raise CliError(
                ErrorCode.SESSION_NOT_FOUND,
                f"no workflow session-{session_id} in namespace {namespace}",
            ) from None
        raise


def namespace_missing(message: str) -> bool:
    """The frontend's wording: ``Namespace NAME is not found.``"""
    lowered = message.lower()
    return lowered.startswith("namespace ") and "not found" in lowered


def _rpc_message(err: Exception) -> str | None:
    from temporalio.service import RPCError, RPCStatusCode

    if not isinstance(err, RPCError):
        return None
    if err.status == RPCStatusCode.UNAVAILABLE:
        return coded_text(ErrorCode.TEMPORAL_UNREACHABLE, f"{_text(err.message)}: {SERVER_HINT}")
    if err.status == RPCStatusCode.NOT_FOUND and namespace_missing(err.message):
        return coded_text(
            CliCode.NAMESPACE_NOT_FOUND,
            f"{_text(err.message)}: create it or set TEMPORAL_NAMESPACE",
        )
    if err.status == RPCStatusCode.UNAUTHENTICATED:
        return coded_text(
            CliCode.TEMPORAL_AUTH, f"{_text(err.message)}: check TEMPORAL_API_KEY / TLS settings"
        )
    return coded_text(ErrorCode.TEMPORAL_ERROR, f"{err.status.name}: {one_line(err.message)}")


def explain(err: BaseException) -> str | None:
    """One line for a known failure, or ``None`` to let the traceback through."""
    from durable_loop.cli.devserver import DevServerError
    from durable_loop.client.connect import TemporalUnreachable

    if isinstance(err, CliError | ConfigError | MissingBinary | DevServerError | MissingExtra):
        return coded_text(err.code, one_line(err.message))
    if isinstance(err, TemporalUnreachable):
        return coded_text(err.code, f"cannot reach Temporal at {err.address}: {SERVER_HINT}")
    if isinstance(err, pydantic.ValidationError):
        return coded_text(ErrorCode.INVALID_SETTING, one_line(validation_message(err)))
    if isinstance(err, tomllib.TOMLDecodeError):
        return coded_text(ErrorCode.CONFIG_ERROR, f"malformed TOML: {one_line(str(err))}")
    if isinstance(err, FileNotFoundError):
        return coded_text(
            CliCode.FILE_NOT_FOUND, f"no such file: {err.filename or one_line(str(err))}"
        )
    if isinstance(err, PermissionError):
        return coded_text(CliCode.PERMISSION_DENIED, err.filename or one_line(str(err)))
    return _rpc_message(err) if isinstance(err, Exception) else None
