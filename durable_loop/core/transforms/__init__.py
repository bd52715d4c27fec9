"""Named, opt-in transforms for provider shape drift.

Each transform is a small pure function applied at one documented point of an LLM
request; ``names`` lists them per point (and is the only module ``config`` imports, to
keep imports acyclic), ``registry`` maps names to functions, and ``pipeline`` is the one
place that applies them (outbound to a provider, inbound from it).
"""
