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

from collections.abc import Callable
from datetime import datetime, timedelta

from aws_lambda_powertools import Logger

from sendledger.domain.clock import iso
from sendledger.domain.messages import (
    DueKind,
    HistoryEntry,
    HistoryType,
    Message,
    MessageState,
    Transition,
)
from sendledger.domain.recipients import fingerprint_of
from sendledger.ports.providers import Finding, LookupResult
from sendledger.usecases.delivery import status_due
from sendledger.usecases.due_report import Counter, Since
from sendledger.usecases.ingest import Pipeline
from sendledger.usecases.resends import resend
from sendledger.usecases.send_command import source_for
from sendledger.usecases.template_catalog import SHIPPED, TemplateCatalog

logger = Logger(child=True)

S = MessageState


def resolve_unknown(
    pipeline: Pipeline,
    message_id: str,
    seconds_left: Callable[[], float],
    report: Counter,
    catalog: TemplateCatalog = SHIPPED,
) -> None:
    services, due_work = pipeline.services, pipeline.due_work
    settings, now = services.settings, services.clock.now()
    message = services.messages.get(message_id)
    if message is None or message.state is not S.UNKNOWN:
        due_work.clear(message_id, DueKind.UNKNOWN)
        left_at = _left_unknown_at(message) if message is not None else None
        since = Since(message.state, left_at) if message is not None and left_at is not None else None
        report.bump("unknown_already_resolved", message_id, since)
        return
    source = source_for(message)
    watermark = services.poller_state.watermark(source)
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
    lookup = _lookup(pipeline, message, evidence)
    if lookup is not None and lookup.found:
        accept_found(pipeline, message, lookup, evidence, report)
        return
    # The provider's index may lag the send: its "not found" counts only after the same grace.
    absent_by_lookup = lookup is not None and lookup.finding is Finding.NOT_FOUND and now > sent_at + grace
    if absent_by_lookup or (watermark is not None and watermark > sent_at + grace):
        # Every event the source emitted for this send is applied, and none proved acceptance.
        entry = HistoryEntry(
            at=now, type=HistoryType.ABSENCE_PROVEN, state=S.RETRY, evidence={**evidence, "decision": "retry"}
        )
        if (
            services.messages.transition(
                message_id, frozenset({S.UNKNOWN}), S.RETRY, [entry], (DueKind.PENDING, now), unless_evidence=True
            )
            is not Transition.APPLIED
        ):
            report.bump("unknown_moved_on", message_id)
            return
        logger.info("unknown send: absence proven, resending with the same message id", extra=log)
        message.state = S.RETRY
        report.bump("absence_proven", message_id)
        resend(pipeline, message, seconds_left, report, catalog)
        return
    if now - message.created_at > timedelta(seconds=settings.unknown_max_age_seconds):
        entry = HistoryEntry(
            at=now, type=HistoryType.UNRESOLVED, state=S.UNRESOLVED, evidence={**evidence, "decision": "unresolved"}
        )
        services.messages.transition(message_id, frozenset({S.UNKNOWN}), S.UNRESOLVED, [entry], None)
        logger.warning("unknown send unresolved: watermark never passed it", extra=log)
        report.bump("unresolved", message_id)
        return
    logger.info("unknown send: watermark behind, staying unknown", extra=log)
    report.bump("unknown_waiting", message_id)


def _left_unknown_at(message: Message) -> datetime | None:
    """When the message last left `unknown` (the event that resolved it), from its history."""
    left_at, unknown = None, False
    for entry in message.history:
        if entry.state is S.UNKNOWN:
            left_at, unknown = None, True
        elif unknown and entry.state is not None and left_at is None:
            left_at = entry.at
    return left_at


def _lookup(pipeline: Pipeline, message: Message, evidence: dict[str, object]) -> LookupResult | None:
    """Ask the message's own provider's lookup API, when it has one (None: it has none).

    Only the provider that carried it: another provider's "not found" proves nothing.
    """
    lookup = pipeline.lookups.get(message.provider)
    if lookup is None or message.test:  # a simulated send: the provider never saw it, and is not asked
        return None
    result = lookup.lookup(message)
    evidence["lookup"] = result.finding.value
    return result


def accept_found(
    pipeline: Pipeline, message: Message, lookup: LookupResult, evidence: dict[str, object], report: Counter
) -> None:
    """The provider's lookup found the timed-out send: accepted, its id recorded, nothing resent."""
    services = pipeline.services
    now = services.clock.now()
    found = {"provider_message_id": lookup.provider_message_id, "provider_status": lookup.status}
    entry = HistoryEntry(
        at=now,
        type=HistoryType.PROVIDER_LOOKUP,
        state=S.ACCEPTED,
        evidence={**evidence, **found, "decision": "accepted"},
    )
    result = services.messages.transition(
        message.message_id,
        frozenset({S.UNKNOWN}),
        S.ACCEPTED,
        [entry],
        status_due(message, services.settings, now),  # found: asked for its status from now on
        provider_message_id=lookup.provider_message_id,
    )
    logger.info(
        "unknown send: the provider's lookup found it, nothing is resent",
        extra={"message_id": message.message_id, "provider_message_id": lookup.provider_message_id},
    )
    report.bump("unknown_found_by_lookup" if result is Transition.APPLIED else "unknown_moved_on", message.message_id)
