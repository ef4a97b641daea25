"""Status out: committed changes read as events, the bus they go to, and signed callbacks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from sendledger.domain.callback_schedule import Queued
from sendledger.domain.callback_targets import IPAddress
from sendledger.domain.caller_settings import CallbackUrl
from sendledger.domain.eligibility import RecordedSend
from sendledger.domain.messages import HistoryEntry
from sendledger.domain.state_changes import StatusEvent
from sendledger.domain.values import value


class StatusChangeSource(Protocol):
    """The ledger's committed writes (stream records) read as status events."""

    def events_of(self, record: dict[str, Any]) -> list[StatusEvent]: ...


class EligibilityLabels(Protocol):
    """`allow` sends labelled after the fact, from the recipient update each one committed."""

    def recorded_send(self, record: dict[str, Any]) -> RecordedSend | None:
        """What a send's recipient update recorded for its label (None: not such an update)."""
        ...

    def label(self, message_id: str, entry: HistoryEntry) -> None:
        """Append the message's one label entry; a label already there (a record handled again)
        or a message that is gone changes nothing. DependencyUnavailable when not written."""
        ...


@value
class AcceptedSms:
    """An SMS whose provider message id its message item just learned (from the stream)."""

    message_id: str
    provider_message_id: str
    escalates: bool


class SmsReceipts(Protocol):
    """Accepted SMS's receipts, written off the send path from the message change that named the
    provider's id: SNS's status records name only that id."""

    def accepted_of(self, record: dict[str, Any]) -> AcceptedSms | None:
        """The SMS this stream record is the acceptance of (None: it is not one)."""
        ...

    def write(self, accepted: AcceptedSms) -> None:
        """The receipt under the provider's id, naming the message; merges with one a status
        record created first, and writing it again changes nothing. DependencyUnavailable when not written."""
        ...


class StatusEventBus(Protocol):
    def put(self, events: Sequence[StatusEvent]) -> None:
        """All of them or DependencyUnavailable; putting one again is harmless (same event_id)."""
        ...


class HostResolver(Protocol):
    def addresses(self, host: str, timeout_seconds: float | None = None) -> list[str]:
        """Every address `host` names now, as text ([]: none, the lookup failed, or it took
        longer than `timeout_seconds`)."""
        ...


class CallbackEndpoint(Protocol):
    def post(
        self,
        url: CallbackUrl,
        addresses: Sequence[IPAddress],
        body: bytes,
        headers: dict[str, str],
        timeout_seconds: float,
    ) -> int | None:
        """POST to `url` over a connection to one of `addresses` (vetted: never a name the
        endpoint resolves itself), TLS verified for `url.host`. The HTTP status, or None when
        there was no answer (timeout, refused, reset)."""
        ...


class CallbackQueue(Protocol):
    """The callback queue a record came from, and its DLQ."""

    def put_back(self, queued: Queued, delay_seconds: int) -> None:
        """Queue the record again as a new message carrying its attempts and due time, visible
        after `delay_seconds` (at most SQS's 15 minutes). DependencyUnavailable when not queued."""
        ...

    def dead_letter(self, queued: Queued, why: str) -> None:
        """Move the record to the callback DLQ, with its attempts and why."""
        ...
