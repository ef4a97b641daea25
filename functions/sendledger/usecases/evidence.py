"""Evidence queries: a caller's message by its key, and its messages of a window, page by page.

Every answer is scoped to the caller: another caller's message is indistinguishable from none.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sendledger.domain import export_window, idempotency, ids
from sendledger.domain.callers import CallerId
from sendledger.domain.errors import InvalidRequest
from sendledger.domain.messages import HistoryType, Message
from sendledger.domain.reset_evidence import CurrentRecord, ResetEvidence, evidence_of
from sendledger.domain.values import value
from sendledger.ports.messages import MessageStore
from sendledger.ports.resets import ResetStore
from sendledger.usecases.intents import MAX_KEY_GENERATIONS

if TYPE_CHECKING:
    from datetime import datetime

_RESET_ID = re.compile(r"^rst_[0-9A-HJKMNP-TV-Z]{26}$")


@value
class EvidencePage:
    messages: list[Message]  # oldest first, each with its history
    cursor: str | None  # where the next page starts; None: this was the last


def find_message(
    messages: MessageStore,
    caller: CallerId,
    idempotency_key: str | None,
    event_id: str | None,
    template_version: str | None,
) -> Message | None:
    """The message a key names: the key's newest generation (an expired key used again is a new one)."""
    key = _key_of(idempotency_key, event_id, template_version)
    scoped = idempotency.scoped_key(caller, key)
    found: Message | None = None
    for generation in range(MAX_KEY_GENERATIONS + 1):
        message = messages.get(ids.keyed_message_id(scoped, generation))
        if message is None:
            break
        found = message
    if found is None or found.owner != caller:
        return None
    return found


def _key_of(idempotency_key: str | None, event_id: str | None, template_version: str | None) -> str:
    if idempotency_key is not None and event_id is None and template_version is None:
        try:
            key = idempotency.parse_key(idempotency_key)
        except InvalidRequest as exc:  # the same rule as the header's, named after this parameter
            raise InvalidRequest(exc.detail, [{"field": "idempotency_key", "message": "invalid"}]) from None
        assert key is not None
        return key
    if idempotency_key is None and event_id and template_version:
        try:
            return idempotency.derive_key(event_id, template_version)
        except UnicodeEncodeError:  # a lone surrogate: no send could have used it
            problem = [{"field": "event_id", "message": "invalid"}]
            raise InvalidRequest("event_id must be valid UTF-8", problem) from None
    raise InvalidRequest(
        "give either idempotency_key, or event_id with template_version",
        [{"field": "idempotency_key", "message": "exactly one of the two forms"}],
    )


def export(
    messages: MessageStore, caller: CallerId, since: str, until: str, cursor: str | None, limit: int | None
) -> EvidencePage:
    window = export_window.window(since, until)
    size = export_window.check_limit(limit)
    after = export_window.decode_cursor(cursor, window) if cursor is not None else None
    page = messages.created_in(caller, window, after, size)
    found = []
    for position in page.positions:
        message = messages.get(position.message_id)
        if message is not None and message.owner == caller:
            found.append(message)
    last = page.positions[-1] if page.positions else None
    return EvidencePage(found, export_window.encode_cursor(last) if page.more and last else None)


def reset_evidence(
    messages: MessageStore, resets: ResetStore, now: datetime, caller: CallerId, reset_id: str
) -> ResetEvidence | None:
    """Which tokens a reset issued, why each stopped being valid, and its mail with history."""
    if not _RESET_ID.match(reset_id):
        return None
    message = messages.get(ids.reset_message_id(reset_id))
    if message is None or message.owner != caller or not message.reset_account_id:
        return None
    if not any(entry.type is HistoryType.RESET_REQUESTED for entry in message.history):
        return None  # not a reset's mail
    record = resets.get(caller, message.reset_account_id)
    current = CurrentRecord(record.state, record.expires_at) if record and record.reset_id == reset_id else None
    return evidence_of(reset_id, message, current, now)
