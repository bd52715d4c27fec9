"""Named, opt-in transforms for provider shape drift.

Each transform is a small pure function applied at one documented point of the LLM
activity; ``names`` lists them per point (and is the only module ``config`` imports, to
keep imports acyclic), ``registry`` maps names to functions and applies them.
"""
