"""A timeout injected after the request left, for conformance runs against a real provider.

Locally the simulators play `+timeout-accepted`; a real provider does not. With
SENDLEDGER_INJECT_TIMEOUTS=true (off by default; for a stage that runs `sendledger conformance`)
an accepted send to an address whose local part ends in `+timeout-accepted` loses its answer
on the way back, exactly as a read timeout after acceptance does: the provider has the message,
sendledger does not know it (unknown), and only the lookup or the provider's events may say so.
"""

from __future__ import annotations

from sendledger.domain.provider import CallResult, ProviderResponse
from sendledger.domain.templates import Rendered
from sendledger.ports.providers import EmailSender

LABEL = "+timeout-accepted"


class TimeoutAfterAcceptance:
    def __init__(self, inner: EmailSender) -> None:
        self.inner = inner

    def send_email(self, message_id: str, to: str, content: Rendered, *, escalates: bool) -> ProviderResponse:
        response = self.inner.send_email(message_id, to, content, escalates=escalates)
        if response.result is CallResult.ACCEPTED and to.rsplit("@", 1)[0].lower().endswith(LABEL):
            return ProviderResponse(CallResult.AMBIGUOUS, error_code="InjectedReadTimeout", attempts=response.attempts)
        return response
