"""Unknown Mailgun sends looked up in the Events API (run by the poll cycle's Mailgun step).

A timed-out send has no Mailgun id, and the API cannot filter on a user variable: the search
is by recipient and `accepted` events since the message was created, and the items are
matched on `user-variables["sendledger-message-id"]` here. A match is applied as any event
is (the one idempotent routine): the message is `accepted`, its due marker cleared, and no
resend can follow. No match proves nothing here; absence is proven by the Mailgun
watermark, which moves only over final time ranges (usecases/resolve_unknown.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from sendledger.domain.messages import DueKind, MessageState
from sendledger.domain.recipients import Channel, fingerprint_of
from sendledger.ports.reports import IngestReport
from sendledger.providers.mailgun import NAME

if TYPE_CHECKING:
    from sendledger.domain.clock import Clock
    from sendledger.ports.ingestion import DueWorkStore
    from sendledger.ports.messages import MessageStore
    from sendledger.ports.providers import EventSink
    from sendledger.providers.mailgun.events import EventsApi

logger = Logger(child=True)

BATCH = 50  # unknown sends looked up per cycle: one Events API search each
MAX_PAGES = 3  # a recipient's accepted events since one send: rarely more than one page
BEFORE_CREATED = timedelta(minutes=1)  # clock skew between us and Mailgun
SAFETY_SECONDS = 8.0


@dataclass(frozen=True)
class UnknownSearch:
    due_work: DueWorkStore
    messages: MessageStore
    clock: Clock

    def run(
        self, sink: EventSink, api: EventsApi, seconds_left: Callable[[], float], report: IngestReport
    ) -> list[str]:
        """The message ids of the unknown sends the search proved accepted."""
        found: list[str] = []
        for due in self.due_work.items(DueKind.UNKNOWN, None, BATCH):
            if seconds_left() < SAFETY_SECONDS:
                break
            message = self.messages.get(due.message_id)
            if (
                message is None
                or message.state is not MessageState.UNKNOWN
                or message.channel is not Channel.EMAIL
                or message.provider != NAME
            ):
                continue
            begin = message.created_at - BEFORE_CREATED
            params = {
                "recipient": message.to,
                "event": "accepted",
                "begin": str(int(begin.timestamp())),
                "end": str(int(self.clock.now().timestamp()) + 1),
                "ascending": "yes",
            }
            page = api.query(params)
            for _ in range(MAX_PAGES):
                match = next(
                    (item.event for item in page.items if item.event and item.event.message_id == message.message_id),
                    None,
                )
                if match is not None:
                    sink.apply(match, report)
                    found.append(message.message_id)
                    logger.info(
                        "unknown send found in the Events API: accepted, nothing is resent",
                        extra={"message_id": message.message_id, "recipient": fingerprint_of(message.recipient_key)},
                    )
                    break
                if not page.items or page.next_url is None:
                    break
                page = api.follow(page.next_url)
        return found
