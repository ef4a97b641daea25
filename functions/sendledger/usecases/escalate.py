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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from aws_lambda_powertools import Logger

from sendledger.domain.callers import hashed_id
from sendledger.domain.clock import Clock, iso
from sendledger.domain.errors import DomainError
from sendledger.domain.escalation import Escalation
from sendledger.domain.messages import ESCALATION_TRIGGERS, DueKind, HistoryEntry, HistoryType, Message, MessageState
from sendledger.domain.recipients import Channel, fingerprint_of
from sendledger.domain.sms_guardrails import refusal_evidence
from sendledger.ports.ingestion import DueItem, DueWorkStore, EscalationQueue, EscalationTimers
from sendledger.ports.messages import MessageStore
from sendledger.ports.reports import CycleReport
from sendledger.usecases.results import Replayed, SendResult, SmsRefused
from sendledger.usecases.send_command import SendCommand
from sendledger.usecases.views import message_view

if TYPE_CHECKING:
    from sendledger.settings import Settings

logger = Logger(child=True)

# Fallback keys are scoped by this id (the message belongs to the parent's caller); the hash of
# the name keeps keys written before callers were normalised.
ESCALATION_CALLER = hashed_id("sendledger-escalation")
BATCH = 50
SAFETY_SECONDS = 8.0


class FallbackSender(Protocol):
    """The one entry escalation sends a fallback through (usecases/send.py MessageSender)."""

    def send(self, command: SendCommand, seconds_left: Callable[[], float]) -> SendResult: ...


@dataclass(frozen=True)
class Escalations:
    """The poll cycle's escalation step: due deadlines, and messages that failed for good early."""

    due_work: DueWorkStore
    timers: EscalationTimers
    messages: MessageStore
    queue: EscalationQueue | None  # None: no escalation queue configured here
    fallback: FallbackSender
    settings: Settings  # the queued message's view
    clock: Clock

    def run(self, seconds_left: Callable[[], float], report: CycleReport) -> None:
        due_work, now = self.due_work, self.clock.now()
        for item in due_work.items(DueKind.ESCALATION, now, BATCH):
            if seconds_left() < SAFETY_SECONDS:
                return
            self.escalate_message(item, seconds_left, report, early=False)
        for item in due_work.items(DueKind.OUTCOME, now, BATCH):
            if seconds_left() < SAFETY_SECONDS:
                return
            # A message that failed for good before its deadline (set by the event apply).
            if item.escalates:
                self.escalate_message(item, seconds_left, report, early=True)
            due_work.clear(item.message_id, DueKind.OUTCOME, receipt_id=item.receipt_id, on_receipt=item.on_receipt)

    def escalate_message(
        self, item: DueItem, seconds_left: Callable[[], float], report: CycleReport, early: bool
    ) -> None:
        timers = self.timers
        now = self.clock.now()
        message = self.messages.get(item.message_id)
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
        queue_id = self._to_escalation_queue(message, escalation, trigger)
        evidence: dict[str, Any] = {
            "trigger": trigger,
            "state_at_escalation": message.state.value,
            "escalation_queue_message_id": queue_id,
            "deadline_seconds": escalation.deadline_seconds,
        }
        if escalation.fallback:
            evidence.update(self._send_fallback(message, item, escalation, seconds_left, report))
        entry = HistoryEntry(
            at=now, type=HistoryType.ESCALATED, state=MessageState.ESCALATED, evidence=evidence, step=4
        )
        receipt_id = message.provider_message_id if message.channel is Channel.SMS else None
        timers.finish(message.message_id, entry, escalate_message=True, outcome="escalated", receipt_id=receipt_id)
        report.escalated += 1
        logger.info("escalated", extra={"message_id": message.message_id, **evidence})

    def _to_escalation_queue(self, message: Message, escalation: Escalation, trigger: str) -> str | None:
        if self.queue is None:
            logger.warning("no escalation queue configured", extra={"message_id": message.message_id})
            return None
        view = message_view(message, self.settings, with_history=True)
        view["to"] = fingerprint_of(message.recipient_key)  # the queue is an ops tool: no raw address
        body = {
            "type": "sendledger.escalation",
            "trigger": trigger,
            "message": view,
            "fallback_count": len(escalation.fallback),
            "escalated_at": iso(self.clock.now()),
        }
        return self.queue.send(body, deduplication_id=f"{message.message_id}-escalation")

    def _send_fallback(
        self,
        message: Message,
        item: DueItem,
        escalation: Escalation,
        seconds_left: Callable[[], float],
        report: CycleReport,
    ) -> dict[str, Any]:
        step = escalation.next_step()
        assert step is not None  # the caller sends a fallback only when there is one
        fallback, carried_on = step
        parent_key = item.idempotency_key or self.messages.idempotency_key_of(message.message_id) or message.message_id
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
            result = self.fallback.send(command, seconds_left)
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
