"""Apply delivery events: the one idempotent routine every provider's events go through.

Cost per event: one TransactWriteItems. Most events name the message by the id the send gave
the provider (a tag, a custom argument); an SMS status record may name only the provider's
message id, so its outcome lands on the send's receipt under that id, which the publisher
writes from the outcome's stream record (adapters/dynamodb/sms_receipts.py).
A duplicate costs its one cancelled transaction. A status record with no receipt costs the
refused write, one or two BatchGetItem (the receipt, the number's last sends) and the write:
- the publisher has not written the receipt yet, and one of the number's last two sends names
  the record's provider id: the record writes the receipt itself, naming that send (the
  publisher's write merges with it, and duplicates dedupe on it);
- the number's send in the window whose Publish answer was never recorded (timed out): the
  record lands on that message's own receipt;
- neither, while the number had a send recent enough that its receipt may still be on the way
  (an older send's, the publisher behind): not applied, DependencyUnavailable, so its source
  tries again (the subscription's retries, then the poller's reconciliation): never guessed;
- neither, and no such send: recorded as unmatched (dedupe, suppression), as any stray record.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from sendledger import names
from sendledger.domain import test_mode
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.event_plan import EventPlan, plan_event
from sendledger.domain.events import DeliveryEvent, EventKind
from sendledger.domain.suppression_rules import TransientPolicy, verdict_for
from sendledger.ports.ingestion import ApplyResult, DeliveryEventStore, SmsMatch
from sendledger.ports.reports import IngestReport, MetricPoint

if TYPE_CHECKING:
    from sendledger.domain.clock import Clock

logger = Logger(child=True)

# A status record names the destination; it proves the outcome of a send to that number whose
# provider message id we never learned (a timed-out publish) when it was published this soon after it.
SMS_SEND_WINDOW_SECONDS = 300
# How long after a send its receipt may still be unwritten: three times the lag at which the
# publisher's iterator-age alarm fires (5 minutes), so a healthy publisher is never outwaited.
SMS_RECEIPT_LAG_SECONDS = 900
SMS_KINDS = frozenset({EventKind.SMS_SUCCESS, EventKind.SMS_FAILURE})


def _said(value: object) -> bool:
    """None, False and "" say nothing happened (0 and 0.0 are figures and stay)."""
    return value is not None and value is not False and value != ""


@dataclass(frozen=True)
class EventIngest:
    """The EventSink of every lane and event handler (ports/providers.py)."""

    events: DeliveryEventStore
    policy: TransientPolicy  # the deployment's transient-bounce rule (settings)
    clock: Clock

    def plan_for(self, event: DeliveryEvent, message_id: str | None, receipt_id: str | None = None) -> EventPlan:
        """The domain's plan of what the event writes (domain/event_plan.py), under this deployment's rules."""
        verdict = verdict_for(event)
        if not verdict.known:
            logger.warning(
                "unknown provider outcome, treated as transient",
                extra={
                    "event_id": event.event_id,
                    "provider_response": event.provider_response,
                    "kind": event.kind.value,
                },
            )
        return plan_event(event, verdict, self.policy, self.clock.now(), message_id=message_id, receipt_id=receipt_id)

    def apply(self, event: DeliveryEvent, report: IngestReport) -> ApplyResult:
        # A simulated send's event (a test caller's) suppresses in the caller's namespace only.
        event = test_mode.scoped(event)
        plan = self.plan_for(event, event.message_id, receipt_id=_receipt_id(event))
        now = plan.at
        result = self.events.apply(plan)
        if result.no_receipt:
            result, plan = self._without_receipt(event, spent=result.requests)
        report.count(result, plan.message_id is not None or plan.receipt_id is not None)
        if result.suppressed_now:
            # Event time → suppression persisted (the transaction just returned).
            lag_ms = (self.clock.now() - event.occurred_at).total_seconds() * 1000
            report.metrics.append(
                MetricPoint(names.METRIC_EVENT_TO_SUPPRESSION_LAG_MS, max(lag_ms, 0.0), "Milliseconds")
            )
        facts = {
            "event_id": event.event_id,
            "event_source": event.source,
            "kind": event.kind.value,
            "message_id": plan.message_id,
            "receipt_id": plan.receipt_id,
            "recipient": event.recipient_fingerprint,
            "event_age_seconds": round((now - event.occurred_at).total_seconds(), 3),
            "duplicate": result.duplicate,
            "state_applied": plan.proves.target.value if plan.proves and result.message_updated else None,
            "state_unchanged": result.prior_state,
            "suppressed_now": result.suppressed_now,
            "already_suppressed": result.already_suppressed,
            "transient_count": result.transient_count,
            "requests": result.requests,
        }
        # One line per applied event, billed by the byte: what did not happen is left out.
        logger.info("delivery event", extra={name: value for name, value in facts.items() if _said(value)})
        return result

    def _without_receipt(self, event: DeliveryEvent, spent: int) -> tuple[ApplyResult, EventPlan]:
        """No receipt under the provider's id: find the send among the number's last sends."""
        provider_id = event.provider_message_id
        assert provider_id is not None
        found = self.events.message_for_provider_id(
            provider_id, event.recipient_key, event.occurred_at, SMS_SEND_WINDOW_SECONDS, dedupe_key=event.dedupe_key
        )
        spent += found.requests
        if found.match is SmsMatch.PROVIDER_ID:
            plan = self.plan_for(event, found.message_id, receipt_id=provider_id)
        elif found.match is SmsMatch.UNKNOWN_ID:
            plan = self.plan_for(event, found.message_id)
        else:
            plan = self.plan_for(event, None)
        if found.applied:
            # The dedupe item is written in the same transaction as everything the event derives,
            # so its presence proves the whole event is applied: no transaction.
            return ApplyResult(duplicate=True, requests=spent), plan
        if found.match is SmsMatch.NONE and self._receipt_may_come(found.last_send_at):
            raise DependencyUnavailable(
                "SMS status record: a recent send to its number may still get its receipt; retry later",
                retry_after_seconds=60,
            )
        result = self.events.apply(plan)
        return replace(result, requests=spent + result.requests), plan

    def _receipt_may_come(self, last_send_at: datetime | None) -> bool:
        return last_send_at is not None and self.clock.now() - last_send_at < timedelta(seconds=SMS_RECEIPT_LAG_SECONDS)


def _receipt_id(event: DeliveryEvent) -> str | None:
    """An SMS status that does not name our message lands on the receipt its send's outcome
    wrote under the provider's message id."""
    if event.message_id is None and event.provider_message_id and event.kind in SMS_KINDS:
        return event.provider_message_id
    return None
