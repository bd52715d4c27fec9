"""Names and defaults every process agrees on."""

from pathlib import Path

TASK_QUEUE = "durable-loop"
DEFAULT_ADDRESS = "127.0.0.1:7233"
DEFAULT_NAMESPACE = "default"
DEFAULT_UI_PORT = 8233
STATE_DIR = Path(".durable-loop")
DEV_SERVER_DB = "temporal.db"
STORE_DB = "durable-loop.db"
