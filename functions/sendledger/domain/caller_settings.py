"""Per-caller settings: where a caller's status events go, whether its sends are simulated,
what its feature flags are evaluated with, and its SMS guardrails (domain/sms_guardrails.py).
One ledger item per caller (`CALLER#<id>` / `SETTINGS`), read through a short per-container
cache: an admin's change is seen by every container within CALLER_SETTINGS_CACHE.

A callback URL is the caller's to choose, and the callbacks Lambda POSTs to it from inside the
deployment: it must not be a way into the deployment's own network. It is checked here as text
(https, a host, no userinfo, port 443 or 8443: a web server's, not SSH's or a database's on a
public host) and, through the resolver port,
as the addresses its host names (callback_targets.py); the adapter checks again at connect time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from urllib.parse import urlsplit

from sendledger.domain.callers import CallerId
from sendledger.domain.flags import CALLER, CALLER_BUCKET
from sendledger.domain.sms_guardrails import CountryRule
from sendledger.domain.values import value

# An admin's change reaches every container within this; a container's own writes at once.
CALLER_SETTINGS_CACHE = timedelta(seconds=30)
MAX_URL_LENGTH = 2048
HTTPS_PORT, HTTP_PORT = 443, 80
CALLBACK_PORTS = (HTTPS_PORT, 8443)  # where a receiver listens; the local stack's loopback receiver: any
# The flag context: a few short attributes a rule may name beside the caller (domain/flags.py).
FLAG_CONTEXT_KEY = re.compile(r"[a-z][a-z0-9_]{0,63}")
MAX_FLAG_CONTEXT_ENTRIES = 16
MAX_FLAG_CONTEXT_VALUE = 256
RESERVED_FLAG_CONTEXT_KEYS = frozenset({CALLER, CALLER_BUCKET})  # set by sendledger, never by a caller


@value
class CallerSettings:
    """One caller's settings; the defaults are what a caller without an item has."""

    caller_id: CallerId
    callback_url: str | None = None  # None: status events are not POSTed to this caller
    test_mode: bool = False  # sends get simulated outcomes, no provider is called
    flag_context: Mapping[str, str] = field(default_factory=dict, hash=False)
    updated_at: datetime | None = None  # None: never written (the defaults)
    updated_by: str | None = None  # the admin principal's ARN that wrote it last
    version: int = 0  # every write moves it by one (the store does)
    # SMS guardrails: None is no rule of the caller's own (the deployment's default country rule
    # applies; no daily cap).
    sms_countries: CountryRule | None = None
    sms_daily_segments: int | None = None  # billed segments per UTC day
    # Who changed what, when and why: one entry per write, oldest first, never removed.
    history: tuple[SettingsChangeEntry, ...] = field(default=(), hash=False)


@value
class SettingsChangeEntry:
    """One admin write of a caller's settings: the fields it changed, with their new values."""

    at: datetime
    actor: str
    reason: str | None
    changed: Mapping[str, object] = field(default_factory=dict, hash=False)


class UrlRefusal(StrEnum):
    """Why a callback URL is refused (the problem's `errors[].type` at the API)."""

    MALFORMED = "malformed"
    NOT_HTTPS = "not-https"
    NO_HOST = "no-host"
    USERINFO = "userinfo"
    BAD_PORT = "bad-port"
    FRAGMENT = "fragment"
    TOO_LONG = "too-long"
    UNRESOLVED = "unresolved"  # the host names no address
    NOT_PUBLIC = "not-public"  # the host is, or resolves to, a non-public address


@value
class Refused:
    reason: UrlRefusal
    detail: str


@value
class CallbackUrl:
    """A callback URL that passed the textual checks: what a connection needs of it."""

    url: str
    secure: bool  # https (http only for a loopback receiver where the local stack allows it)
    host: str  # lower case; an IP literal without brackets
    port: int
    target: str  # path and query: the request line's target

    @property
    def host_header(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        default = HTTPS_PORT if self.secure else HTTP_PORT
        return shown if self.port == default else f"{shown}:{self.port}"


def parse_callback_url(url: str, *, allow_http: bool = False) -> CallbackUrl | Refused:
    """The URL's parts, or why it cannot be a callback URL. `allow_http` is the local stack's
    allowance for its loopback receiver (callback_targets.py refuses http to anything else)."""
    if len(url) > MAX_URL_LENGTH:
        return Refused(UrlRefusal.TOO_LONG, f"at most {MAX_URL_LENGTH} characters")
    if any(ord(c) <= 0x20 or ord(c) == 0x7F for c in url):
        return Refused(UrlRefusal.MALFORMED, "a URL has no spaces or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return Refused(UrlRefusal.BAD_PORT if "port" in str(exc).lower() else UrlRefusal.MALFORMED, str(exc))
    scheme = parts.scheme.lower()
    if scheme != "https" and not (allow_http and scheme == "http"):
        return Refused(UrlRefusal.NOT_HTTPS, "callback URLs are https://")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return Refused(UrlRefusal.USERINFO, "no user or password in the URL (the signature authenticates)")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        return Refused(UrlRefusal.NO_HOST, "the URL names no host")
    if parts.fragment:
        return Refused(UrlRefusal.FRAGMENT, "a fragment is never sent: leave it out")
    secure = scheme == "https"
    if port == 0:
        return Refused(UrlRefusal.BAD_PORT, "port 0 is no port")
    if not allow_http and (port or HTTPS_PORT) not in CALLBACK_PORTS:
        return Refused(UrlRefusal.BAD_PORT, "callback URLs use port 443 or 8443")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return CallbackUrl(url, secure, host.lower(), port or (HTTPS_PORT if secure else HTTP_PORT), target)


def flag_context_problems(context: Mapping[str, str]) -> list[str]:
    """What is wrong with a caller's flag context (empty: nothing)."""
    problems = []
    if len(context) > MAX_FLAG_CONTEXT_ENTRIES:
        problems.append(f"at most {MAX_FLAG_CONTEXT_ENTRIES} entries")
    for key, text in context.items():
        if key in RESERVED_FLAG_CONTEXT_KEYS:
            problems.append(f"{key!r} is set by sendledger")
        elif not FLAG_CONTEXT_KEY.fullmatch(key):
            problems.append(f"{key[:80]!r} must match {FLAG_CONTEXT_KEY.pattern}")
        if len(text) > MAX_FLAG_CONTEXT_VALUE:
            problems.append(f"{key[:80]!r}: at most {MAX_FLAG_CONTEXT_VALUE} characters")
    return problems


@dataclass
class CallerSettingsCache:
    """A container's recent reads (and own writes) of caller settings. A stale entry is at most
    `ttl` behind the item: a callback may go to the old URL for that long after a change."""

    ttl: timedelta = CALLER_SETTINGS_CACHE
    _entries: dict[CallerId, tuple[datetime, CallerSettings]] = field(default_factory=dict)

    def get(self, caller_id: CallerId, now: datetime) -> CallerSettings | None:
        """The settings read less than `ttl` ago; a clock that went back counts as stale."""
        entry = self._entries.get(caller_id)
        if entry is not None and timedelta(0) <= now - entry[0] < self.ttl:
            return entry[1]
        return None

    def put(self, settings: CallerSettings, now: datetime) -> None:
        self._entries[settings.caller_id] = (now, settings)
