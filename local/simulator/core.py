"""The Simulator: the hooks, the SES and SMS sides and the fault labels, with one outbox."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import boto3
import boto3.session
from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.exceptions import ReadTimeoutError

from local.constants import (
    ACCOUNT_ID,
    CONFIGURATION_SET,
    REGION,
    SES_EVENTS_TOPIC,
    SMS_FAILURE_SUBSCRIPTION_FILTER,
    SMS_SUCCESS_SUBSCRIPTION_FILTER,
    sms_log_groups,
    topic_arn,
)
from local.simulator import hooks
from local.simulator.faults import LABEL_THROTTLE, LABEL_TIMEOUT_ACCEPTED, LABEL_TIMEOUT_LOST, FaultCounter, masked
from local.simulator.providers import ses
from local.simulator.providers import sns as sms
from sendledger.providers.simulated.rules import TimedRecord

LOG = logging.getLogger("sendledger.local.simulator")

Clock = Callable[[], datetime]
SmsDelivery = Callable[[dict[str, Any]], Any]


def utc_now() -> datetime:
    return datetime.now(UTC)


class Simulator:
    """SES and SNS (SMS) as the local stack and the tests see them. Thread-safe."""

    def __init__(
        self,
        *,
        region: str = REGION,
        account_id: str = ACCOUNT_ID,
        ses_topic_arn: str | None = None,
        default_configuration_set: str | None = CONFIGURATION_SET,
        sms_success_log_group: str | None = None,
        sms_failure_log_group: str | None = None,
        clock: Clock = utc_now,
        aws_session: boto3.session.Session | None = None,
    ) -> None:
        self.region = region
        self.account_id = account_id
        self.ses_topic_arn = ses_topic_arn or topic_arn(SES_EVENTS_TOPIC, region, account_id)
        self.default_configuration_set = default_configuration_set
        success_group, failure_group = sms_log_groups(region, account_id)
        self.sms_success_log_group = sms_success_log_group or success_group
        self.sms_failure_log_group = sms_failure_log_group or failure_group
        self.clock = clock  # read at every call: tests may swap it
        self._aws_session = aws_session
        self._lock = threading.RLock()
        self._in_flight = threading.local()  # the request between its before-send and after-call
        self._faults = FaultCounter()
        self._outbox: list[dict[str, Any]] = []
        self._ses_queue: list[TimedRecord] = []
        self._sms_queue: list[sms.PendingSms] = []
        # The providers played over HTTP (local/simulator/providers/), by name: they share this
        # outbox, clock and fault counter.
        self.sides: dict[str, Any] = {}
        self._hooks = hooks.Hooks(
            {
                hooks.BEFORE_SEND_EMAIL: self._before_send_email,
                hooks.AFTER_SEND_EMAIL: self._after_send_email,
                hooks.BEFORE_PUBLISH: self._before_publish,
                hooks.AFTER_PUBLISH: self._after_publish,
            }
        )

    # --- installation ---------------------------------------------------------------------
    @classmethod
    def install(cls, session: Any = None, **kwargs: Any) -> Simulator:
        """Create a simulator and hook it into ``session`` (default: boto3's default session).

        Only clients created after this call are observed (botocore copies the session's
        event handlers into each new client).
        """
        simulator = cls(**kwargs)
        simulator.attach(session)
        return simulator

    def attach(self, session: Any = None) -> None:
        self._hooks.attach(session)

    def uninstall(self) -> None:
        self._hooks.detach()

    # --- public views ---------------------------------------------------------------------
    def outbox(self) -> list[dict[str, Any]]:
        """Every message the simulated providers accepted, oldest first (copies)."""
        with self._lock:
            return [dict(entry) for entry in self._outbox]

    def pending(self) -> dict[str, int]:
        with self._lock:
            return {
                "ses_events": len(self._ses_queue),
                "sms_records": sum(1 for item in self._sms_queue if not item.written),
                "sms_deliveries": len(self._sms_queue),
            }

    def now(self) -> datetime:
        return self.clock()  # read at every call: tests may swap the clock

    @property
    def faults(self) -> FaultCounter:
        return self._faults

    def record(self, entry: dict[str, Any]) -> None:
        """One outbox entry of a provider played over HTTP."""
        with self._lock:
            self._outbox.append(entry)

    def reset(self) -> None:
        for side in self.sides.values():
            side.reset()
        with self._lock:
            self._outbox.clear()
            self._faults.reset()
            self._ses_queue.clear()
            self._sms_queue.clear()

    # --- SES hooks ------------------------------------------------------------------------
    def _before_send_email(self, request: AWSPreparedRequest, **_kwargs: Any) -> AWSResponse | None:
        self._in_flight.email = None
        parsed = ses.parse_send_email(request, self.default_configuration_set)
        fault = self._faults.before_acceptance(parsed.to[0]) if parsed.label else None
        if fault == LABEL_TIMEOUT_LOST:
            LOG.info("simulator: a send to %s times out before SES accepts it", masked(parsed.to[0]))
            raise ReadTimeoutError(endpoint_url=request.url)
        if fault == LABEL_THROTTLE:
            LOG.info("simulator: SES throttles the send to %s", masked(parsed.to[0]))
            return ses.throttled(request)
        self._in_flight.email = parsed
        return None  # let it through to moto

    def _after_send_email(self, http_response: Any, parsed: dict[str, Any], **_kwargs: Any) -> None:
        request: ses.EmailRequest | None = getattr(self._in_flight, "email", None)
        self._in_flight.email = None
        if request is None or http_response.status_code >= 300 or "MessageId" not in parsed:
            return
        message_id = str(parsed["MessageId"])
        sent_at = self.clock()
        events = ses.ses_events(request, message_id, sent_at, region=self.region, account_id=self.account_id)
        with self._lock:
            self._outbox.extend(ses.outbox_entries(request, message_id, sent_at))
            self._ses_queue.extend(events)
        if request.label == LABEL_TIMEOUT_ACCEPTED:
            LOG.info("simulator: SES accepted %s, the caller sees a timeout", message_id)
            raise ReadTimeoutError(endpoint_url=request.url)

    # --- SNS (SMS) hooks ------------------------------------------------------------------
    def _before_publish(self, request: AWSPreparedRequest, **_kwargs: Any) -> None:
        self._in_flight.sms = None
        self._in_flight.sms = sms.parse_publish(request)

    def _after_publish(self, http_response: Any, parsed: dict[str, Any], **_kwargs: Any) -> None:
        request: sms.SmsRequest | None = getattr(self._in_flight, "sms", None)
        self._in_flight.sms = None
        if request is None or http_response.status_code >= 300 or "MessageId" not in parsed:
            return
        message_id = str(parsed["MessageId"])
        sent_at = self.clock()
        pending = sms.status_record(
            request,
            message_id,
            sent_at,
            success=sms.LogGroup(self.sms_success_log_group, SMS_SUCCESS_SUBSCRIPTION_FILTER),
            failure=sms.LogGroup(self.sms_failure_log_group, SMS_FAILURE_SUBSCRIPTION_FILTER),
        )
        with self._lock:
            self._outbox.append(sms.outbox_entry(request, message_id, sent_at))
            if pending is not None:
                self._sms_queue.append(pending)

    # --- deferred event emission ----------------------------------------------------------
    def flush(self, deliver_sms: SmsDelivery | None = None) -> dict[str, int]:
        """Emit every queued provider event.

        SES records go to the SNS topic (→ SQS as the SNS envelope); SMS records are written
        to their log group and then, when ``deliver_sms`` is given, delivered to it as a
        CloudWatch Logs subscription event. Undelivered records stay queued and are retried
        on the next flush, as a subscription retries.
        """
        with self._lock:
            now = self.clock()
            ses_batch, self._ses_queue = self._ses_queue, []
            sms_batch = list(self._sms_queue)
        published = 0
        failed_ses: list[TimedRecord] = []
        if ses_batch:
            published, failed_ses = ses.publish_events(self._client("sns"), self.ses_topic_arn, ses_batch, now)
        written = self._write_sms([item for item in sms_batch if not item.written], now)
        done = self._deliver_sms(sms_batch, deliver_sms) if deliver_sms is not None else []
        with self._lock:
            self._ses_queue = failed_ses + self._ses_queue
            self._sms_queue = [item for item in self._sms_queue if item not in done]
            remaining = len(self._sms_queue)
        return {
            "ses_events_published": published,
            "sms_records_written": written,
            "sms_records_delivered": len(done),
            "sms_records_awaiting_delivery": remaining,
        }

    def _write_sms(self, unwritten: list[sms.PendingSms], now: datetime) -> int:
        if not unwritten:
            return 0
        logs = self._client("logs")
        for count, item in enumerate(unwritten):
            try:
                sms.write_record(logs, item, now, account_id=self.account_id)
            except Exception:
                LOG.exception("simulator: writing SMS delivery logs failed; kept")
                return count
        return len(unwritten)

    def _deliver_sms(self, batch: list[sms.PendingSms], deliver: SmsDelivery) -> list[sms.PendingSms]:
        done: list[sms.PendingSms] = []
        for item in batch:
            if not item.written:
                continue
            try:
                deliver(item.event)
            except Exception:
                LOG.exception("simulator: sms_delivery_logs failed; redelivered next flush")
                break
            done.append(item)
        return done

    def _client(self, service: str) -> Any:
        session = self._aws_session or boto3.session.Session()
        return session.client(service, region_name=self.region)
