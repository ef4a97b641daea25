"""Providers that answer from a script: accepted, throttled, unavailable, timed out, rejected.

Each call takes the next scripted reply (accepted once the script is empty). `calls` is every
call made; `outbox` what the provider actually has: accepted sends, and timed-out calls whose
request arrived (`TIMEOUT_REACHED`) — what a recipient would get.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass

from sendledger.domain.provider import CallResult, ProviderResponse
from sendledger.domain.templates import Rendered


@dataclass(frozen=True)
class Reply:
    result: CallResult
    reached: bool = False  # the provider got the message (whatever the caller was told)
    error_code: str | None = None
    retry_after_seconds: float | None = None


ACCEPTED = Reply(CallResult.ACCEPTED, reached=True)
THROTTLED = Reply(CallResult.THROTTLED, error_code="Throttling")
UNAVAILABLE = Reply(CallResult.UNAVAILABLE, error_code="EndpointConnectionError")
TIMEOUT_LOST = Reply(CallResult.AMBIGUOUS, error_code="ReadTimeoutError")  # never arrived
TIMEOUT_REACHED = Reply(CallResult.AMBIGUOUS, reached=True, error_code="ReadTimeoutError")  # arrived, answer lost
REJECTED = Reply(CallResult.REJECTED, error_code="MessageRejected")


@dataclass(frozen=True)
class Call:
    message_id: str
    to: str
    content: Rendered
    category: str | None = None
    escalates: bool = False


class ScriptedProvider:
    def __init__(self, id_prefix: str, *script: Reply) -> None:
        self.id_prefix = id_prefix
        self.script = list(script)
        self.calls: list[Call] = []
        self.outbox: list[Call] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.on_arrival: Callable[[Call], None] | None = None  # told of each call that reached it

    def then(self, *replies: Reply) -> ScriptedProvider:
        """Script the next calls' replies (after those already scripted)."""
        self.script.extend(replies)
        return self

    def _answer(self, call: Call) -> ProviderResponse:
        with self._lock:
            reply = self.script.pop(0) if self.script else ACCEPTED
            self.calls.append(call)
            number = next(self._ids)
            if reply.reached:
                self.outbox.append(call)
                if self.on_arrival is not None:
                    self.on_arrival(call)
        accepted = reply.result is CallResult.ACCEPTED
        return ProviderResponse(
            result=reply.result,
            provider_message_id=f"{self.id_prefix}-{number:04d}" if accepted else None,
            request_id=f"{self.id_prefix}-request-{number:04d}",
            error_code=reply.error_code,
            retry_after_seconds=reply.retry_after_seconds,
        )


class FakeEmailSender(ScriptedProvider):
    def __init__(self, *script: Reply) -> None:
        super().__init__("ses", *script)

    def send_email(self, message_id: str, to: str, content: Rendered, *, escalates: bool) -> ProviderResponse:
        return self._answer(Call(message_id, to, content, escalates=escalates))


class FakeSmsSender(ScriptedProvider):
    def __init__(self, *script: Reply) -> None:
        super().__init__("sns", *script)

    def send_sms(self, message_id: str, to: str, content: Rendered, category: str) -> ProviderResponse:
        return self._answer(Call(message_id, to, content, category))
