"""Replay evals: recorded sessions re-asked of another model, tools answered from the record."""
