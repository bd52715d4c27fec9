"""The HTTP service: JSON endpoints (OpenAPI at ``/openapi.json``) and the approval page.

``create_app`` builds the FastAPI application; ``durable-loop serve`` runs it with uvicorn.
"""

from durable_loop.service.app import create_app
from durable_loop.service.deps import ServiceDeps

__all__ = ["ServiceDeps", "create_app"]
