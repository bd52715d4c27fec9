"""Processes and wiring: worker, embedded dev server, CLI."""
