"""Callback receivers in memory: secrets, DNS answers and an endpoint that records every POST."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sendledger.domain.callback_schedule import Queued
from sendledger.domain.callback_targets import IPAddress
from sendledger.domain.callbacks import SigningKeys
from sendledger.domain.caller_settings import CallbackUrl
from sendledger.domain.callers import CallerId


@dataclass
class FakeSecrets:
    """One value per caller, as the Secrets Manager adapter keeps it (no cache: always fresh)."""

    values: dict[CallerId, SigningKeys] = field(default_factory=dict)
    reads: int = 0

    def keys(self, caller_id: CallerId) -> SigningKeys | None:
        self.reads += 1
        return self.values.get(caller_id)

    def put(self, caller_id: CallerId, keys: SigningKeys) -> None:
        self.values[caller_id] = keys


@dataclass
class FakeResolver:
    """DNS as a script: each host's answers in turn (the last one repeats); unknown hosts: none."""

    answers: dict[str, list[list[str]]] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)
    clock: Any = None  # with `takes_seconds`: each lookup moves this clock by that much
    takes_seconds: float = 0

    def answer(self, host: str, *addresses: str) -> FakeResolver:
        self.answers.setdefault(host, []).append(list(addresses))
        return self

    def addresses(self, host: str, timeout_seconds: float | None = None) -> list[str]:
        self.asked.append(host)
        if self.clock is not None:
            self.clock.advance(self.takes_seconds)
        if timeout_seconds is not None and self.takes_seconds > timeout_seconds:
            return []
        queue = self.answers.get(host)
        if not queue:
            return []
        return queue.pop(0) if len(queue) > 1 else list(queue[0])


@dataclass
class Posted:
    url: str
    address: str
    body: bytes
    headers: dict[str, str]


@dataclass
class RecordingEndpoint:
    """Answers from a script (default 204); records the URL, the address it would connect to,
    the body and the headers of every POST."""

    answers: list[int | None] = field(default_factory=list)
    posts: list[Posted] = field(default_factory=list)
    timeouts: list[float] = field(default_factory=list)  # each POST's own deadline

    def post(
        self,
        url: CallbackUrl,
        addresses: Sequence[IPAddress],
        body: bytes,
        headers: dict[str, str],
        timeout_seconds: float,
    ) -> int | None:
        self.posts.append(Posted(url.url, str(addresses[0]), body, headers))
        self.timeouts.append(timeout_seconds)
        return self.answers.pop(0) if self.answers else 204

    def to(self, url: str) -> list[Posted]:
        return [post for post in self.posts if post.url == url]


ACCOUNT = "123456789012"  # the bus's and the callback queue's account


@dataclass
class FakeCallbackQueue:
    """What was queued again (the record, its delay) and what went to the DLQ (the record, why)."""

    put_backs: list[tuple[Queued, int]] = field(default_factory=list)
    dead: list[tuple[Queued, str]] = field(default_factory=list)

    def put_back(self, queued: Queued, delay_seconds: int) -> None:
        self.put_backs.append((queued, delay_seconds))

    def dead_letter(self, queued: Queued, why: str) -> None:
        self.dead.append((queued, why))

    @property
    def delays(self) -> list[int]:
        return [delay for _, delay in self.put_backs]

    def next_record(self) -> Queued:
        return self.put_backs[-1][0]
