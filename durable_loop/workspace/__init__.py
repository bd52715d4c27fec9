"""Opt-in workspace: facts, draft, locks, ui_state beside the chat; the model proposes,
a person commits. Tools: :func:`durable_loop.workspace.tools.workspace_tools`."""
