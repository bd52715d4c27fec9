"""Which text each message id was first sent with, so a reused id is told apart from a
retry: the same id with the same text is answered with the first reply (a retry), with
another text it is refused with ``IDEMPOTENCY_KEY_REUSED`` (a second message under a key
that is taken), as payment APIs answer a reused Idempotency-Key.

Only a digest of the text is kept, and only for the ids the session still answers from
memory: queued, running and recent results.
"""

from __future__ import annotations

from collections.abc import Iterable

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.canonical_json import sha256_hex


class MessageBodies:
    def __init__(self, digests: dict[str, str]) -> None:
        self._digests = dict(digests)

    def remember(self, message_id: str, text: str) -> None:
        self._digests.setdefault(message_id, sha256_hex(text))

    def reused(self, message_id: str, text: str) -> bool:
        """The id is known with another text (ids from before digests were kept are not)."""
        known = self._digests.get(message_id)
        return known is not None and known != sha256_hex(text)

    def retain(self, message_ids: Iterable[str]) -> None:
        self._digests = self.of(message_ids)

    def of(self, message_ids: Iterable[str]) -> dict[str, str]:
        """The digests of ``message_ids`` (those known), e.g. to carry across runs."""
        wanted = set(message_ids)
        return {k: v for k, v in self._digests.items() if k in wanted}
