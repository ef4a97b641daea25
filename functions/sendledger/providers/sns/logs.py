"""CloudWatch Logs FilterLogEvents over the SNS SMS delivery-status log groups."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from sendledger.adapters import sdk
from sendledger.ports.log_subscription import LogRecord
from sendledger.providers.sns.events import LogPage

LOGS_CONFIG = sdk.config(retries=sdk.STANDARD_RETRIES, read_timeout=10)


class CloudWatchLogReader:
    def __init__(self, client: Any = None) -> None:
        # Made by the first read: the SMS handler never reads.
        self._client = sdk.LazyClient(lambda: sdk.client("logs", LOGS_CONFIG), client)

    @property
    def client(self) -> Any:
        return self._client.get()

    def filter(self, log_group: str, start_time_ms: int, next_token: str | None, limit: int) -> LogPage:
        kwargs: dict[str, Any] = {"logGroupName": log_group, "startTime": start_time_ms, "limit": limit}
        if next_token:
            kwargs["nextToken"] = next_token
        try:
            response = self.client.filter_log_events(**kwargs)
        except ClientError as exc:
            # SNS creates the log groups with the first status record: none yet, nothing to read.
            if exc.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
                return LogPage(events=[], next_token=None)
            raise
        events = [
            LogRecord(str(raw.get("eventId", "")), int(raw.get("timestamp", 0)), str(raw.get("message", "")))
            for raw in response.get("events", [])
        ]
        return LogPage(events=events, next_token=response.get("nextToken"))
