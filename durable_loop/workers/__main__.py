"""``python -m durable_loop.workers`` is the ``durable-loop`` command."""

from durable_loop.workers.cli import main

main()
