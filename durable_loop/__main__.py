"""``python -m durable_loop`` is the ``durable-loop`` command."""

from durable_loop.console import main

main()
