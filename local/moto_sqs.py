"""moto's SQS ReceiveMessage without a queue-wide attribute computation per received message.

moto 5.2.5 checks each message it is about to return against the queue's retention period by
calling ``get_queue_attributes(queue, ["MessageRetentionPeriod"])``, which builds every
attribute first, ApproximateNumberOfMessages* included: a pass over the whole queue per message,
so draining a queue of n messages costs n² (about 0.3 s per ReceiveMessage at 400 messages).
This version reads the one attribute it needs; the rule (a message is valid while
``sent + retention`` is in the future) is moto's.
"""

from __future__ import annotations

from moto.core.utils import unix_time
from moto.sqs.models import Message, SQSBackend

MOTO_IS_MESSAGE_VALID = SQSBackend.is_message_valid_based_on_retention_period


def is_message_valid_based_on_retention_period(self: SQSBackend, queue_name: str, message: Message) -> bool:
    retention_period = int(vars(self.get_queue(queue_name))["message_retention_period"])  # set by _set_attributes
    retain_until = retention_period + message.sent_timestamp / 1000  # type: ignore[operator]
    return bool(retain_until > unix_time())


def install() -> None:
    SQSBackend.is_message_valid_based_on_retention_period = is_message_valid_based_on_retention_period  # type: ignore[method-assign]


def uninstall() -> None:
    SQSBackend.is_message_valid_based_on_retention_period = MOTO_IS_MESSAGE_VALID  # type: ignore[method-assign]
