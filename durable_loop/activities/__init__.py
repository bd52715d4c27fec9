"""Temporal activities: every side effect of durable-loop lives here."""
