"""What the triage session may call."""

from __future__ import annotations

from durable_loop import ToolRegistry

PLANS = {"acme": "enterprise", "globex": "free"}

registry = ToolRegistry()


@registry.tool(timeout_s=5)
def customer_plan(customer: str) -> dict[str, str]:
    """Look up a customer's support plan (enterprise, free or unknown)."""
    return {"customer": customer, "plan": PLANS.get(customer.strip().lower(), "unknown")}
