"""The simulated providers' outcome rules: which address or number gets which outcome.

One copy, used by every slice's simulation (providers/<name>/simulation.py), so by the local
stack's simulators (local/simulator/) and by a test caller's sends in a deployed stack
(sender.py). Pure: no clock, no state, no I/O.

* Email: the mailbox simulator's addresses (`success@`, `bounce@`, `complaint@`, `ooto@`,
  `suppressionlist@simulator.amazonses.com`, `+label` allowed) behave as that simulator's do;
  any other address is delivered.
* SMS: the fictional numbers `+1NPA55501XX` pick the outcome by XX: 00-49 delivered, 50-89 one
  failure string per ten, 90-99 no status ever; any other number is delivered.
* Fault labels: a local part ending in `+timeout-lost`, `+throttle` or `+timeout-accepted`
  picks a transport fault (fault_before_acceptance says which call it hits).
"""

from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum
from typing import Any

MAILBOX_SIMULATOR_DOMAIN = "simulator.amazonses.com"
TimedRecord = tuple[datetime, dict[str, Any]]  # (when the event happens, the record)


class MailboxKind(StrEnum):
    SUCCESS = "success"
    BOUNCE = "bounce"  # a permanent bounce (5.1.1)
    COMPLAINT = "complaint"  # delivered, then a complaint
    OOTO = "ooto"  # delivered (the auto-reply goes to the sender, not to sendledger)
    SUPPRESSIONLIST = "suppressionlist"  # bounced: on the account's suppression list


MAILBOX_SIMULATOR_KINDS = frozenset(MailboxKind)


def mailbox_simulator_kind(address: str) -> MailboxKind | None:
    """`bounce` for `bounce+x@simulator.amazonses.com`; None outside the mailbox simulator."""
    local, _, domain = address.rpartition("@")
    if domain.lower() != MAILBOX_SIMULATOR_DOMAIN:
        return None
    base = local.split("+", 1)[0].lower()
    return MailboxKind(base) if base in MailboxKind._value2member_map_ else None


class Fault(StrEnum):
    TIMEOUT_ACCEPTED = "timeout-accepted"  # accepted, and the caller sees a read timeout
    TIMEOUT_LOST = "timeout-lost"  # the first call times out before the provider accepts anything
    THROTTLE = "throttle"  # the first THROTTLED_CALLS calls are throttled


LABEL_TIMEOUT_ACCEPTED = Fault.TIMEOUT_ACCEPTED
LABEL_TIMEOUT_LOST = Fault.TIMEOUT_LOST
LABEL_THROTTLE = Fault.THROTTLE
LABELS = tuple(Fault)
THROTTLED_CALLS = 2


def fault_label(address: str) -> Fault | None:
    """The fault label at the end of an address's local part (`alice+throttle@x` → throttle)."""
    local = address.rsplit("@", 1)[0].lower()
    for label in Fault:
        if local.endswith("+" + label.value):
            return label
    return None


def fault_before_acceptance(label: Fault | None, earlier_calls: int) -> Fault | None:
    """`timeout-lost` or `throttle` when this call must not reach the provider, else None.

    `earlier_calls`: how many calls for the same send came before this one, so a retry of the
    same send eventually gets through (the local simulators count per address and label).
    """
    if label is Fault.TIMEOUT_LOST and earlier_calls == 0:
        return label
    if label is Fault.THROTTLE and earlier_calls < THROTTLED_CALLS:
        return label
    return None


SMS_SUCCESS_RESPONSE = "Message has been accepted by phone carrier"
NO_STATUS = ""  # sms_outcome's word for "the carrier never reports"
# XX of +1NPA55501XX, by tens (absent: delivered); NO_STATUS, else the failure string.
_SMS_TENS: dict[int, str] = {
    5: "Phone carrier is currently unreachable/unavailable",
    6: "Invalid phone number",
    7: "Phone number is opted out",
    8: "Unknown error attempting to reach phone",
    9: NO_STATUS,
}
_FICTIONAL_NUMBER = re.compile(r"^\+1\d{3}55501(\d{2})$")


def sms_outcome(phone_number: str) -> str:
    """The providerResponse a number yields (the SMS status log's wording); NO_STATUS for no status ever."""
    match = _FICTIONAL_NUMBER.match(phone_number)
    if match is None:
        return SMS_SUCCESS_RESPONSE
    return _SMS_TENS.get(int(match.group(1)) // 10, SMS_SUCCESS_RESPONSE)
