"""The arguments and options of the commands by which a person decides (``approve``,
``reject``, ``tool-calls ...``, ``pending``), each declared once."""

from __future__ import annotations

from typing import Annotated

import typer

Session = Annotated[str, typer.Argument(help="Session id (workflow id session-<ID>).")]
Target = Annotated[
    str, typer.Argument(help="A held tool call's id or a proposal's id, as `pending` lists it.")
]
Call = Annotated[str, typer.Argument(help="Tool call id, as listed by `tool-calls list`.")]
Approver = Annotated[
    str, typer.Option("--as", help="Who decides (recorded in the audit log).", show_default=False)
]
Comment = Annotated[
    str | None, typer.Option("--comment", help="Optional note; the model reads it.")
]
Fingerprint = Annotated[
    str | None,
    typer.Option("--fingerprint", help="Bind to this fingerprint instead of the pending one."),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]
RememberOn = Annotated[
    bool,
    typer.Option(
        "--remember",
        help="A tool call only: approve later calls of the same tool too (for the rest "
        "of the session, or --for); calls already waiting that it allows run now.",
    ),
]
RememberFor = Annotated[
    float | None, typer.Option("--for", help="With --remember: for this many seconds.", min=1)
]
RememberWhen = Annotated[
    str | None,
    typer.Option(
        "--when",
        help="With --remember: only calls whose arguments match this JSON Schema, e.g. "
        '\'{"properties": {"amount": {"maximum": 100}}}\'.',
    ),
]
EditedArguments = Annotated[
    str | None,
    typer.Option(
        "--args",
        help="A tool call only: run it with these arguments instead (a JSON object, "
        "checked against the tool's schema); the model reads which fields changed.",
    ),
]
Arguments = Annotated[
    str, typer.Option("--args", help="The arguments the call runs with, as a JSON object.")
]
Answer = Annotated[
    str,
    typer.Argument(
        help="happened (its effect took place; --result is what the model reads), run_again "
        "(run it once more) or give_up (the model reads that it did not run)."
    ),
]
Result = Annotated[
    str | None,
    typer.Option("--result", help="With happened: the call's result, as the model reads it."),
]
