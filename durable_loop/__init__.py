"""durable-loop: durable, inspectable and safe LLM tool calling on Temporal."""

__version__ = "0.1.0"
