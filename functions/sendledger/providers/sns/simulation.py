"""What simulated SNS logs for an accepted SMS publish: its delivery-status record.

The shape is the documented one (tests/fixtures/aws-formats); the outcome is the rules'
(providers/simulated/rules.py: `+1NPA55501XX` picks it by XX, 90-99 never report). Used by the
local simulator (local/simulator/providers/sns.py) and by a test caller's deployed sends
(`SnsSimulation`, which the test-mode carrier asks). Pure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sendledger.domain.clock import iso
from sendledger.providers.simulated.rules import NO_STATUS, SMS_SUCCESS_RESPONSE, sms_outcome

if TYPE_CHECKING:
    from sendledger.domain.events import DeliveryEvent
    from sendledger.ports.providers import SimulatedSend

SMS_TYPE = "Transactional"  # what SnsSmsSender asks for


@dataclass
class SmsStatus:
    record: dict[str, Any]  # the log event's message, as SNS writes it
    failure: bool  # written to the .../Failure log group
    at: datetime  # when SNS logs it


def sns_log_timestamp(moment: datetime) -> str:
    """`2026-11-29 10:00:05.120`: SNS delivery-status logs, UTC without a zone."""
    return iso(moment).replace("T", " ").removesuffix("Z")


def sms_status(phone_number: str, message_id: str, sent_at: datetime, sms_type: str) -> SmsStatus | None:
    """The delivery-status record SNS logs for one publish; None when none ever comes."""
    outcome = sms_outcome(phone_number)
    if outcome == NO_STATUS:
        return None  # 90-99: the carrier never reports
    notification = {"messageId": message_id, "timestamp": sns_log_timestamp(sent_at)}
    delivery: dict[str, Any]
    if outcome == SMS_SUCCESS_RESPONSE:
        dwell, status = 599, "SUCCESS"
        delivery = {
            "phoneCarrier": "Example Carrier",
            "mnc": 270,
            "destination": phone_number,
            "priceInUSD": 0.00645,
            "smsType": sms_type,
            "mcc": 310,
            "providerResponse": outcome,
            "dwellTimeMs": dwell,
            "dwellTimeMsUntilDeviceAck": 1344,
        }
    else:
        dwell, status = 1420, "FAILURE"
        delivery = {
            "mnc": 0,
            "destination": phone_number,
            "priceInUSD": 0.0,
            "smsType": sms_type,
            "mcc": 0,
            "providerResponse": outcome,
            "dwellTimeMs": dwell,
        }
    record = {"notification": notification, "delivery": delivery, "status": status}
    return SmsStatus(record, status == "FAILURE", sent_at + timedelta(milliseconds=dwell))


class SnsSimulation:
    """SNS for a test caller: the status record it would log, as its log group holds it."""

    def events(self, send: SimulatedSend) -> list[str]:
        status = sms_status(send.to, send.provider_message_id, send.at, SMS_TYPE)
        return [] if status is None else [json.dumps(status.record)]  # +1NPA5550190-99: never a status

    def parse(self, body: str) -> list[DeliveryEvent]:
        from sendledger.providers.sns.events import parse_sms_record

        return [parse_sms_record(body)]
