"""Infrai's REST surface as sendledger uses it: one send, one record read, over the same urllib3
client as the other HTTP providers (providers/http.py), which never retries: a retried send after
a read timeout is the duplicate this project exists to prevent. The key is read per call through
the secret cache and only ever sent to the configured base URL."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from sendledger.domain.recipients import Channel
from sendledger.providers.http import Http, HttpAnswer, default_http
from sendledger.providers.infrai.assumptions import ASSUMED


class InfraiClient:
    def __init__(self, api_base: str, api_key: Callable[[], str], http: Http | None = None) -> None:
        self.base = api_base.rstrip("/")
        self.api_key = api_key
        self.http = http or default_http()

    def send(self, channel: Channel, body: dict[str, Any], idempotency_key: str) -> HttpAnswer:
        """Raises urllib3's exceptions for what never got an answer (the caller decides what they prove)."""
        send_path, _ = ASSUMED.paths[channel]
        headers = {
            **self._auth(),
            "Content-Type": "application/json",
            "Idempotency-Key": idempotency_key,  # a second net: the provider dedupes too
        }
        payload = json.dumps(body, separators=(",", ":")).encode()
        return self.http.request("POST", self.base + send_path, body=payload, headers=headers)

    def get(self, channel: Channel, message_id: str) -> HttpAnswer:
        _, get_path = ASSUMED.paths[channel]
        url = self.base + get_path.replace("{id}", quote(message_id, safe=""))
        return self.http.request("GET", url, body=None, headers=self._auth())

    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key()}", "Accept": "application/json"}
