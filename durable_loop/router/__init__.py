"""The router -> executor -> tool -> summarizer pipeline for small-context models.

``protocol`` and ``prompts`` are pure (the workflow imports them); the model calls are
activities in ``durable_loop.activities.router``.
"""
