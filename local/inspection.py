"""What the console reads beside the API: any caller's message, and which recipients exist.

The API scopes messages to their caller; the console shows every caller's, so it reads them
here, through the same store and the same view the API answers with. Recipients are listed from
the ledger's recipient items (names only); their suppression views come from the API itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sendledger import bootstrap, names
from sendledger.adapters.dynamodb.keys import RECIPIENT_SK, recipient_pk
from sendledger.domain import test_mode
from sendledger.usecases.views import message_view

MAX_IDS = 200  # messages one request may ask for (the console asks for what it shows)


class LedgerInspector:
    def __init__(self, table_name: str, runtime: Callable[[], bootstrap.Runtime] | None = None) -> None:
        self.table_name = table_name
        self._runtime = runtime or bootstrap.runtime

    def message(self, message_id: str, *, with_history: bool = True) -> dict[str, Any] | None:
        runtime = self._runtime()
        message = runtime.messages.get(message_id) if message_id.startswith("msg_") else None
        return None if message is None else message_view(message, runtime.settings, with_history=with_history)

    def messages(self, message_ids: list[str]) -> list[dict[str, Any]]:
        """The views (without history) of those of ``message_ids`` that exist, in that order."""
        views = (self.message(message_id, with_history=False) for message_id in message_ids[:MAX_IDS])
        return [view for view in views if view is not None]

    def recipients(self) -> list[str]:
        """Every recipient the ledger has an item for (sent to, suppressed or lifted), sorted."""
        import boto3

        client = boto3.client("dynamodb")
        prefix = recipient_pk("")
        found: list[str] = []
        request: dict[str, Any] = {
            "TableName": self.table_name,
            "ProjectionExpression": "#pk",
            "FilterExpression": "begins_with(#pk, :prefix) AND #sk = :sk",
            "ExpressionAttributeNames": {"#pk": names.TABLE_PARTITION_KEY, "#sk": names.TABLE_SORT_KEY},
            "ExpressionAttributeValues": {":prefix": {"S": prefix}, ":sk": {"S": RECIPIENT_SK}},
        }
        while True:
            page = client.scan(**request)
            for item in page.get("Items", []):
                key = item[names.TABLE_PARTITION_KEY]["S"][len(prefix) :]
                if test_mode.is_test_key(key):
                    continue  # a test caller's own recipient: no real address's suppression
                # "SUP#email:bob@example.com" -> "bob@example.com"
                found.append(key.partition(":")[2])
            if "LastEvaluatedKey" not in page:
                return sorted(found)
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
