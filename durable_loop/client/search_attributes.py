"""Registering the session search attributes in a namespace, and checking that they are.

The session workflow upserts them only when its settings say so, because an unregistered
attribute fails the workflow task on every retry: the client checks first.
"""

from __future__ import annotations

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from durable_loop.workflows.visibility import SEARCH_ATTRIBUTES

INDEXED_TYPES = {
    "Keyword": IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    "Int": IndexedValueType.INDEXED_VALUE_TYPE_INT,
}


async def registered(client: Client) -> bool | None:
    """True when every session attribute is registered, False when one is missing, None
    when the server cannot tell (the time-skipping test server has no list call)."""
    try:
        listing = await client.operator_service.list_search_attributes(
            ListSearchAttributesRequest(namespace=client.namespace)
        )
    except RPCError as err:
        if err.status in (RPCStatusCode.UNIMPLEMENTED, RPCStatusCode.PERMISSION_DENIED):
            return None
        raise
    known = dict(listing.custom_attributes)
    return all(known.get(name) == INDEXED_TYPES[kind] for name, kind in SEARCH_ATTRIBUTES.items())


async def ensure_registered(client: Client) -> bool:
    """Add the attributes the namespace lacks; True when all are registered afterwards.

    Works on the dev server and the time-skipping test server; a server that refuses the
    operator call (e.g. no permission) gives False, and sessions then skip the upserts."""
    if await registered(client):
        return True
    for name, kind in SEARCH_ATTRIBUTES.items():
        request = AddSearchAttributesRequest(
            namespace=client.namespace, search_attributes={name: INDEXED_TYPES[kind]}
        )
        try:
            await client.operator_service.add_search_attributes(request)
        except RPCError as err:
            if err.status == RPCStatusCode.ALREADY_EXISTS or "already exists" in err.message:
                continue
            if err.status in (RPCStatusCode.PERMISSION_DENIED, RPCStatusCode.UNIMPLEMENTED):
                return False
            raise
    return True
