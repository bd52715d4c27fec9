"""Names shared by the workflow and the activities that implement them."""

SESSION_WORKFLOW = "Session"
CHILD_SESSION_WORKFLOW = "ChildSession"
LIST_TOOLS = "list_tools"
LLM_TURN = "llm_turn"
RUN_TOOL = "run_tool"
RUN_LONG_TOOL = "run_long_tool"
ROUTER_STEP = "router_step"
ROUTER_ANSWER = "router_answer"
WRITE_MESSAGES = "write_messages"
SUMMARIZE_CONTEXT = "summarize_context"
REPAIR_TOOL_CALL = "repair_tool_call"
CONVERSATION_GATE = "conversation_gate"
AUDIT_SESSION_CHANGE = "audit_session_change"

UPDATE_SEND_MESSAGE = "send_message"
UPDATE_SWITCH_MODEL = "switch_model"
UPDATE_SET_BUDGET = "set_budget"
UPDATE_CANCEL_MESSAGE = "cancel_message"
SIGNAL_POST_MESSAGE = "post_message"
SIGNAL_CLOSE = "close"
SIGNAL_CANCEL_MESSAGE = "cancel_message"
QUERY_STATUS = "status"
QUERY_TAIL = "transcript_tail"


def long_running_queue(task_queue: str) -> str:
    """Where long-running tools run by default: a separate worker pool beside ``task_queue``."""
    return f"{task_queue}-long"


def session_workflow_id(session_id: str) -> str:
    return f"session-{session_id}"
