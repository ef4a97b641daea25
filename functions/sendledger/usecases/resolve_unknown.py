"""`unknown` sends: a lookup before any retry.

`unknown` is evidence, not permission (never a blind resend). An ingested email event tagged with the
message id, or an SMS status record for the destination, already moved the message (the event
apply removes its due marker). Otherwise absence counts as proven only once the source
watermark has passed the send time plus UNKNOWN_GRACE_SECONDS; then the message is resent with
the same message id. With the watermark behind it stays `unknown`, and becomes `unresolved`
after UNKNOWN_MAX_AGE_SECONDS. A password-reset message is resent through the reset flow, so a
fresh token replaces the old hash (never two valid tokens).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from sendledger.domain.clock import Clock, iso
from sendledger.domain.messages import (
    DueKind,
    HistoryEntry,
    HistoryType,
    Message,
    MessageState,
    Transition,
)
from sendledger.domain.provider import source_of
from sendledger.domain.recipients import fingerprint_of
from sendledger.ports.ingestion import DueWorkStore
from sendledger.ports.messages import MessageStore
from sendledger.ports.poller_state import PollerStateStore
from sendledger.ports.providers import AcceptanceLookup, Finding, LookupResult
from sendledger.ports.reports import CycleReport, Since
from sendledger.usecases.delivery import status_due
from sendledger.usecases.resends import Resender

if TYPE_CHECKING:
    from sendledger.settings import Settings

logger = Logger(child=True)

S = MessageState


@dataclass(frozen=True)
class UnknownResolver:
    """An `unknown` send's resolution: its provider's lookup, then the watermark, then a resend
    (also the FoundSends a lane records a timed-out send it found again through)."""

    messages: MessageStore
    due_work: DueWorkStore
    poller_state: PollerStateStore  # the source's watermark
    # By provider name: the API that finds a timed-out send again (shared with the composition
    # root, which fills it from the enabled slices).
    lookups: Mapping[str, AcceptanceLookup]
    resender: Resender
    settings: Settings  # the grace, the max age, the providers' status intervals
    clock: Clock

    def resolve(self, message_id: str, seconds_left: Callable[[], float], report: CycleReport) -> None:
        settings, now = self.settings, self.clock.now()
        message = self.messages.get(message_id)
        if message is None or message.state is not S.UNKNOWN:
            self.due_work.clear(message_id, DueKind.UNKNOWN)
            left_at = _left_unknown_at(message) if message is not None else None
            since = Since(message.state, left_at) if message is not None and left_at is not None else None
            report.bump("unknown_already_resolved", message_id, since)
            return
        source = source_of(message.provider)
        watermark = self.poller_state.watermark(source)
        sent_at = max(message.created_at, message.updated_at)
        grace = timedelta(seconds=settings.unknown_grace_seconds)
        evidence: dict[str, object] = {
            "source": source,
            "watermark": iso(watermark) if watermark else None,
            "watermark_age_seconds": round((now - watermark).total_seconds(), 3) if watermark else None,
            "sent_at": iso(sent_at),
            "grace_seconds": settings.unknown_grace_seconds,
            "attempt": message.attempt,
        }
        log = {"message_id": message_id, "recipient": fingerprint_of(message.recipient_key), **evidence}
        lookup = self._lookup(message, evidence)
        if lookup is not None and lookup.found:
            self.accept_found(message, lookup, evidence, report)
            return
        # The provider's index may lag the send: its "not found" counts only after the same grace.
        absent_by_lookup = lookup is not None and lookup.finding is Finding.NOT_FOUND and now > sent_at + grace
        if absent_by_lookup or (watermark is not None and watermark > sent_at + grace):
            # Every event the source emitted for this send is applied, and none proved acceptance.
            entry = HistoryEntry(
                at=now, type=HistoryType.ABSENCE_PROVEN, state=S.RETRY, evidence={**evidence, "decision": "retry"}
            )
            if (
                self.messages.transition(
                    message_id, frozenset({S.UNKNOWN}), S.RETRY, [entry], (DueKind.PENDING, now), unless_evidence=True
                )
                is not Transition.APPLIED
            ):
                report.bump("unknown_moved_on", message_id)
                return
            logger.info("unknown send: absence proven, resending with the same message id", extra=log)
            message.state = S.RETRY
            report.bump("absence_proven", message_id)
            self.resender.resend(message, seconds_left, report)
            return
        if now - message.created_at > timedelta(seconds=settings.unknown_max_age_seconds):
            entry = HistoryEntry(
                at=now, type=HistoryType.UNRESOLVED, state=S.UNRESOLVED, evidence={**evidence, "decision": "unresolved"}
            )
            self.messages.transition(message_id, frozenset({S.UNKNOWN}), S.UNRESOLVED, [entry], None)
            logger.warning("unknown send unresolved: watermark never passed it", extra=log)
            report.bump("unresolved", message_id)
            return
        logger.info("unknown send: watermark behind, staying unknown", extra=log)
        report.bump("unknown_waiting", message_id)

    def _lookup(self, message: Message, evidence: dict[str, object]) -> LookupResult | None:
        """Ask the message's own provider's lookup API, when it has one (None: it has none).

        Only the provider that carried it: another provider's "not found" proves nothing.
        """
        lookup = self.lookups.get(message.provider)
        if lookup is None or message.test:  # a simulated send: the provider never saw it, and is not asked
            return None
        result = lookup.lookup(message)
        evidence["lookup"] = result.finding.value
        return result

    def accept_found(
        self, message: Message, lookup: LookupResult, evidence: dict[str, object], report: CycleReport
    ) -> None:
        """The provider's lookup found the timed-out send: accepted, its id recorded, nothing resent."""
        now = self.clock.now()
        found = {"provider_message_id": lookup.provider_message_id, "provider_status": lookup.status}
        entry = HistoryEntry(
            at=now,
            type=HistoryType.PROVIDER_LOOKUP,
            state=S.ACCEPTED,
            evidence={**evidence, **found, "decision": "accepted"},
        )
        result = self.messages.transition(
            message.message_id,
            frozenset({S.UNKNOWN}),
            S.ACCEPTED,
            [entry],
            status_due(message, self.settings, now),  # found: asked for its status from now on
            provider_message_id=lookup.provider_message_id,
        )
        logger.info(
            "unknown send: the provider's lookup found it, nothing is resent",
            extra={"message_id": message.message_id, "provider_message_id": lookup.provider_message_id},
        )
        what = "unknown_found_by_lookup" if result is Transition.APPLIED else "unknown_moved_on"
        report.bump(what, message.message_id)


def _left_unknown_at(message: Message) -> datetime | None:
    """When the message last left `unknown` (the event that resolved it), from its history."""
    left_at, unknown = None, False
    for entry in message.history:
        if entry.state is S.UNKNOWN:
            left_at, unknown = None, True
        elif unknown and entry.state is not None and left_at is None:
            left_at = entry.at
    return left_at
