"""Temporal workflow definitions only."""
