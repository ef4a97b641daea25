"""Mailgun `GET /v3/{domain}/events` and its `paging.next` URLs (SDK-free, urllib3).

Reads are safe to retry, so this pool retries connection faults and 429/5xx a few times.
An error answer raises: the poller step fails, its cursor stays, the page is read again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import urllib3

from sendledger.domain.errors import DependencyUnavailable
from sendledger.providers.mailgun.events import EventsPage, parse_events_page
from sendledger.providers.mailgun.http import KeySource, basic_auth

PAGE_LIMIT = 300  # Mailgun's maximum
READ_RETRIES = urllib3.Retry(total=3, backoff_factor=0.5, status_forcelist=(429, 500, 502, 503, 504))


class MailgunEventsApi:
    def __init__(self, api_base: str, domain: str, api_key: KeySource, http: urllib3.PoolManager | None = None) -> None:
        self.base = api_base.rstrip("/")
        self.url = f"{self.base}/v3/{quote(domain, safe='')}/events"
        self.api_key = api_key
        self.http = http or urllib3.PoolManager(retries=READ_RETRIES, timeout=urllib3.Timeout(connect=2, read=10))

    def query(self, params: Mapping[str, str]) -> EventsPage:
        return self._get(f"{self.url}?{urlencode({'limit': str(PAGE_LIMIT), **params})}")

    def follow(self, url: str) -> EventsPage:
        # A next URL names Mailgun's host; the key is only ever sent to the configured one.
        if urlsplit(url).netloc != urlsplit(self.base).netloc:
            raise DependencyUnavailable("Events API paging URL points at another host", retry_after_seconds=60)
        return self._get(url)

    def _get(self, url: str) -> EventsPage:
        try:
            response = self.http.request(
                "GET", url, headers={"Authorization": basic_auth(self.api_key()), "Accept": "application/json"}
            )
        except urllib3.exceptions.HTTPError as exc:
            raise DependencyUnavailable(
                f"Events API unreachable: {type(exc).__name__}", retry_after_seconds=15
            ) from None
        if response.status != 200:
            raise DependencyUnavailable(f"Events API answered {response.status}", retry_after_seconds=15)
        try:
            document: Any = json.loads(response.data or b"null")
            return parse_events_page(document)
        except ValueError:  # MalformedEvent included: read again next cycle
            raise DependencyUnavailable("unreadable Events API answer", retry_after_seconds=15) from None
