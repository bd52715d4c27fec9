"""One module per ``durable-loop`` command. Keep imports at the top light (typer and the
standard library); import heavy modules inside the command function so startup stays fast."""
