"""Escalation: a message not delivered by its deadline (or failed for good earlier) goes to the
escalation queue with its history, and the next fallback recipient is sent through the same
idempotent path (key derived from the parent key and the step).

Every step is safe to repeat, so a poller that crashes between them converges on rerun:
the queue message carries a deduplication id (exact on a FIFO queue), the fallback send is an
idempotent replay, and the final write only lands while the escalation is still scheduled.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, Protocol

from aws_lambda_powertools import Logger

from sendledger.domain.callers import hashed_id
from sendledger.domain.clock import iso
from sendledger.domain.errors import DomainError
from sendledger.domain.escalation import Escalation
from sendledger.domain.messages import ESCALATION_TRIGGERS, DueKind, HistoryEntry, HistoryType, Message, MessageState
from sendledger.domain.recipients import Channel, fingerprint_of
from sendledger.domain.sms_guardrails import refusal_evidence
from sendledger.ports.ingestion import DueItem
from sendledger.usecases.ingest import Pipeline
from sendledger.usecases.results import Replayed, SmsRefused
from sendledger.usecases.send import send_message
from sendledger.usecases.send_command import SendCommand
from sendledger.usecases.template_catalog import SHIPPED, TemplateCatalog
from sendledger.usecases.views import message_view

logger = Logger(child=True)

# Fallback keys are scoped by this id (the message belongs to the parent's caller); the hash of
# the name keeps keys written before callers were normalised.
ESCALATION_CALLER = hashed_id("sendledger-escalation")
BATCH = 50
SAFETY_SECONDS = 8.0


class Counter(Protocol):
    escalated: int

    def bump(self, what: str) -> None: ...


def run_escalations(
    pipeline: Pipeline, seconds_left: Callable[[], float], report: Counter, catalog: TemplateCatalog = SHIPPED
) -> None:
    due_work, now = pipeline.due_work, pipeline.services.clock.now()
    for item in due_work.items(DueKind.ESCALATION, now, BATCH):
        if seconds_left() < SAFETY_SECONDS:
            return
        escalate_message(pipeline, item, seconds_left, report, early=False, catalog=catalog)
    for item in due_work.items(DueKind.OUTCOME, now, BATCH):
        if seconds_left() < SAFETY_SECONDS:
            return
        # A message that failed for good before its deadline (set by the event apply).
        if item.escalates:
            escalate_message(pipeline, item, seconds_left, report, early=True, catalog=catalog)
        due_work.clear(item.message_id, DueKind.OUTCOME, receipt_id=item.receipt_id, on_receipt=item.on_receipt)


def escalate_message(
    pipeline: Pipeline,
    item: DueItem,
    seconds_left: Callable[[], float],
    report: Counter,
    early: bool,
    catalog: TemplateCatalog = SHIPPED,
) -> None:
    services, timers = pipeline.services, pipeline.escalation_timers
    now = services.clock.now()
    message = services.messages.get(item.message_id)
    # A receipt's marker carries only the flag: the escalation itself is read with the message.
    escalation = item.escalation or (message.escalation if message else None)
    if message is None or not escalation:
        return
    if message.state is MessageState.DELIVERED:
        if not early:
            entry = HistoryEntry(
                at=now, type=HistoryType.ESCALATION_NOT_NEEDED, evidence={"state": "delivered"}, step=4
            )
            timers.finish(message.message_id, entry, escalate_message=False, outcome="delivered")
        return
    if early and message.state not in ESCALATION_TRIGGERS:
        return
    if message.state is MessageState.ESCALATED:
        entry = HistoryEntry(at=now, type=HistoryType.ESCALATION_DONE, evidence={"state": "escalated"}, step=4)
        timers.finish(message.message_id, entry, escalate_message=False, outcome="escalated")
        return
    trigger = "failed_early" if early else "deadline"
    queue_id = _to_escalation_queue(pipeline, message, escalation, trigger)
    evidence: dict[str, Any] = {
        "trigger": trigger,
        "state_at_escalation": message.state.value,
        "escalation_queue_message_id": queue_id,
        "deadline_seconds": escalation.deadline_seconds,
    }
    if escalation.fallback:
        evidence.update(_send_fallback(pipeline, message, item, escalation, seconds_left, report, catalog))
    entry = HistoryEntry(at=now, type=HistoryType.ESCALATED, state=MessageState.ESCALATED, evidence=evidence, step=4)
    receipt_id = message.provider_message_id if message.channel is Channel.SMS else None
    timers.finish(message.message_id, entry, escalate_message=True, outcome="escalated", receipt_id=receipt_id)
    report.escalated += 1
    logger.info("escalated", extra={"message_id": message.message_id, **evidence})


def _to_escalation_queue(pipeline: Pipeline, message: Message, escalation: Escalation, trigger: str) -> str | None:
    if pipeline.escalations is None:
        logger.warning("no escalation queue configured", extra={"message_id": message.message_id})
        return None
    view = message_view(message, pipeline.services.settings, with_history=True)
    view["to"] = fingerprint_of(message.recipient_key)  # the queue is an ops tool: no raw address
    body = {
        "type": "sendledger.escalation",
        "trigger": trigger,
        "message": view,
        "fallback_count": len(escalation.fallback),
        "escalated_at": iso(pipeline.services.clock.now()),
    }
    return pipeline.escalations.send(body, deduplication_id=f"{message.message_id}-escalation")


def _send_fallback(
    pipeline: Pipeline,
    message: Message,
    item: DueItem,
    escalation: Escalation,
    seconds_left: Callable[[], float],
    report: Counter,
    catalog: TemplateCatalog,
) -> dict[str, Any]:
    step = escalation.next_step()
    assert step is not None  # the caller sends a fallback only when there is one
    fallback, carried_on = step
    parent_key = (
        item.idempotency_key or pipeline.services.messages.idempotency_key_of(message.message_id) or message.message_id
    )
    number = escalation.step + 1
    command = SendCommand(
        channel=fallback.channel,
        to=fallback.to,
        template=message.template,
        params=dict(message.params or {}),
        category=message.category,
        caller=ESCALATION_CALLER,
        idempotency_header=fallback_key(parent_key, number),
        # The chain continues through the same mechanism: the fallback escalates to the rest.
        escalation=carried_on,
        parent_key=parent_key,
        owner=message.owner,
        # A fallback on the same channel goes through the provider its parent was carried by.
        provider=message.provider if fallback.channel is message.channel else None,
        test=message.test,  # a test caller's chain stays simulated whatever its settings say now
        pinned=True,  # the parent's words: its version and locale, retired since or not
    )
    try:
        result = send_message(pipeline.services, command, seconds_left, catalog)
    except DomainError as exc:
        # A fallback the template cannot serve (e.g. no SMS variant): escalate without it.
        logger.error("fallback not sendable", extra={"message_id": message.message_id, "error": exc.detail})
        return {"fallback_step": number, "fallback_error": exc.detail}
    if isinstance(result, SmsRefused):
        # The owner's country rule refused the fallback's number: escalated without it, and said why.
        report.bump(f"sms_refused_{result.refusal.reason.value}")
        return {"fallback_step": number, "fallback_refused": refusal_evidence(result.refusal)}
    return {
        "fallback_step": number,
        "fallback_message_id": result.view["message_id"],
        "fallback_state": result.view["state"],
        "fallback_replayed": isinstance(result, Replayed),
    }


def fallback_key(parent_key: str, step: int) -> str:
    return f"escalation:{hashlib.sha256(parent_key.encode()).hexdigest()[:40]}:{step}"
