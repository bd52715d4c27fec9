"""Names shared by the workflow and the activities that implement them."""

SESSION_WORKFLOW = "Session"
LIST_TOOLS = "list_tools"
LLM_TURN = "llm_turn"
RUN_TOOL = "run_tool"
WRITE_MESSAGES = "write_messages"

UPDATE_SEND_MESSAGE = "send_message"
SIGNAL_POST_MESSAGE = "post_message"
SIGNAL_CLOSE = "close"
QUERY_STATUS = "status"
QUERY_TAIL = "transcript_tail"


def session_workflow_id(session_id: str) -> str:
    return f"session-{session_id}"
