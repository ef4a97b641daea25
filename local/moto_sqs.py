"""moto's SQS without per-message clock reads and per-message attribute builds.

moto 5.2.5 reads the clock once per message every time it counts a queue (``Message.visible``
and ``Message.delayed`` each call ``unix_time_millis()``, a datetime round trip), and builds every
queue attribute, those counts included, on each SendMessage (to read ContentBasedDeduplication)
and for each message a ReceiveMessage returns (to read MessageRetentionPeriod). A queue of n
messages made each send and each received message cost n clock reads, so a poll cycle's drain
grew with the square of the backlog (0.3 s per ReceiveMessage at 400 messages). Here the
counts read the clock once per count, and the retention check reads its one attribute; which
messages are visible, delayed, expired or counted is moto's rule, unchanged.
"""

from __future__ import annotations

from local.moto_version import require_supported_moto

require_supported_moto("local/moto_sqs.py")

from typing import Any

from moto.core.utils import unix_time, unix_time_millis
from moto.sqs.models import Message, Queue, SQSBackend

_PATCHED = (
    (SQSBackend, "is_message_valid_based_on_retention_period"),
    (Queue, "messages"),
    (Queue, "approximate_number_of_messages"),
    (Queue, "approximate_number_of_messages_delayed"),
    (Queue, "approximate_number_of_messages_not_visible"),
)
MOTO: dict[tuple[type, str], Any] = {(owner, name): vars(owner)[name] for owner, name in _PATCHED}


def is_message_valid_based_on_retention_period(self: SQSBackend, queue_name: str, message: Message) -> bool:
    retention_period = int(vars(self.get_queue(queue_name))["message_retention_period"])  # set by _set_attributes
    retain_until = retention_period + message.sent_timestamp / 1000  # type: ignore[operator]
    return bool(retain_until > unix_time())


# Message.visible is "now > visible_at", Message.delayed is "now < delayed_until" (milliseconds).
def _messages(self: Queue) -> list[Message]:
    now = unix_time_millis()
    return [m for m in self._messages if now > m.visible_at and not now < m.delayed_until]


def _delayed(self: Queue) -> int:
    now = unix_time_millis()
    return sum(1 for m in self._messages if now < m.delayed_until)


def _not_visible(self: Queue) -> int:
    now = unix_time_millis()
    return sum(1 for m in self._messages if not now > m.visible_at)


def _visible(self: Queue) -> int:
    return len(_messages(self))


OURS: dict[tuple[type, str], Any] = {
    (SQSBackend, "is_message_valid_based_on_retention_period"): is_message_valid_based_on_retention_period,
    (Queue, "messages"): property(_messages),
    (Queue, "approximate_number_of_messages"): property(_visible),
    (Queue, "approximate_number_of_messages_delayed"): property(_delayed),
    (Queue, "approximate_number_of_messages_not_visible"): property(_not_visible),
}


def install() -> None:
    for (owner, name), value in OURS.items():
        setattr(owner, name, value)


def uninstall() -> None:
    for (owner, name), value in MOTO.items():
        setattr(owner, name, value)
