"""SendGrid Email Activity API: find a timed-out send by its custom argument.

`GET /v3/messages?limit=10&query=(unique_args['sendledger_message_id']="msg_…")` needs the
account's Email Activity add-on and a key with access to it. A listed message proves SendGrid
accepted the send; an empty list proves nothing until SendGrid has had time to index the
message (the caller waits UNKNOWN_GRACE_SECONDS before it counts).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from urllib.parse import quote

from urllib3.exceptions import HTTPError as Urllib3Error

from sendledger.domain.messages import Message
from sendledger.ports.providers import Finding, LookupResult
from sendledger.providers.http import Http, default_http
from sendledger.providers.sendgrid.events import MESSAGE_ID_ARG, x_message_id

MESSAGES_PATH = "/v3/messages"
LIMIT = 10
FAILED = LookupResult(Finding.FAILED)  # no answer, an error status or an unreadable body: nothing proven


def activity_query(message_id: str) -> str:
    return f"(unique_args['{MESSAGE_ID_ARG}']=\"{message_id}\")"


class SendGridEmailActivity:
    def __init__(self, api_base: str, api_key: Callable[[], str], http: Http | None = None) -> None:
        self.url = api_base.rstrip("/") + MESSAGES_PATH
        self.api_key = api_key
        self.http = http or default_http()

    def lookup(self, message: Message) -> LookupResult:
        url = f"{self.url}?limit={LIMIT}&query={quote(activity_query(message.message_id), safe='')}"
        headers = {"Authorization": f"Bearer {self.api_key()}", "Accept": "application/json"}
        try:
            answer = self.http.request("GET", url, body=None, headers=headers)
        except Urllib3Error:
            return FAILED
        if answer.status != 200:
            return FAILED
        try:
            messages = json.loads(answer.body).get("messages")
        except (ValueError, AttributeError):
            return FAILED
        if not isinstance(messages, list):
            return FAILED
        found = [item for item in messages if isinstance(item, dict)]
        if not found:
            return LookupResult(Finding.NOT_FOUND)
        first = found[0]
        msg_id = first.get("msg_id") if isinstance(first.get("msg_id"), str) else None
        status = first.get("status") if isinstance(first.get("status"), str) else None
        return LookupResult(Finding.FOUND, provider_message_id=x_message_id(msg_id), status=status)
