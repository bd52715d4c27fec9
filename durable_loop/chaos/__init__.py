"""Fault injection: kill workers and the server mid-session, script a hostile provider and
hostile tools, then check that every session ended correctly, no side effect ran twice, no
fact changed without a person's confirmation and nothing in the store is half-written.

``durable-loop chaos`` runs every scenario and prints the report; ``tests/chaos/`` runs the
same scenarios under pytest (marker ``chaos``).
"""
