"""``GET /local/outbox``: the simulator's entries, each with sendledger's ``message_id``.

An SES send carries the id as a message tag, so the simulator records it; an SNS Publish to a
phone number carries none, so an SMS entry gets it from the receipt the publisher writes from
the outcome's stream record (``PMID#<provider message id>``), read from the ledger table once and
then remembered. Until that receipt exists (the publisher's lag, or a timed-out call the poller
has not yet resolved) the entry's ``message_id`` is null.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import boto3

from sendledger.adapters.dynamodb.keys import RECEIPT_SK, receipt_pk

BATCH_GET_LIMIT = 100  # BatchGetItem's keys per request


class LedgerOutbox:
    def __init__(
        self,
        entries: Callable[[], list[dict[str, Any]]],
        table: str,
        client: Callable[[], Any] = lambda: boto3.client("dynamodb"),
    ) -> None:
        self._entries = entries
        self._table = table
        self._client = client
        self._known: dict[str, str] = {}  # provider message id -> sendledger message id
        self._lock = threading.Lock()

    def entries(self) -> list[dict[str, Any]]:
        found = self._entries()
        missing = sorted(
            {
                str(entry["provider_message_id"])
                for entry in found
                if entry.get("message_id") is None and entry.get("provider_message_id")
            }
            - set(self._known)
        )
        if missing:
            self._learn(missing)
        for entry in found:
            if entry.get("message_id") is None:
                entry["message_id"] = self._known.get(str(entry.get("provider_message_id")))
        return found

    def _learn(self, provider_ids: list[str]) -> None:
        client = self._client()
        for start in range(0, len(provider_ids), BATCH_GET_LIMIT):
            batch = provider_ids[start : start + BATCH_GET_LIMIT]
            keys = [{"pk": {"S": receipt_pk(pid)}, "sk": {"S": RECEIPT_SK}} for pid in batch]
            request: dict[str, Any] = {self._table: {"Keys": keys, "ProjectionExpression": "pk, message_id"}}
            while request:
                answer = client.batch_get_item(RequestItems=request)
                with self._lock:
                    for item in answer.get("Responses", {}).get(self._table, []):
                        self._known[item["pk"]["S"].removeprefix(receipt_pk(""))] = item["message_id"]["S"]
                request = answer.get("UnprocessedKeys") or {}
