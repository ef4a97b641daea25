"""The complaint row of a conformance leg and its measured times, judged from what the leg saw
(the end-to-end run is tests/local/test_conformance_local.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from sendledger_client.complaint_leg import Seen, describe, judge, measured

HISTORY: list[dict[str, Any]] = [
    {"at": "2026-12-06T10:00:00.000Z", "type": "intent", "state": "received"},
    {"at": "2026-12-06T10:00:00.250Z", "type": "provider_outcome", "provider_result": "accepted", "state": "accepted"},
    {"at": "2026-12-06T10:00:02.000Z", "type": "event:Delivery", "state": "delivered",
     "event_at": "2026-12-06T10:00:01.500Z"},
    {"at": "2026-12-06T10:00:05.000Z", "type": "event:Complaint", "state": "complained",
     "event_at": "2026-12-06T10:00:03.000Z"},
]  # fmt: skip
SUPPRESSED = {"suppressed": True, "reason_class": "complaint", "since": "2026-12-06T10:00:05.000Z"}  # a caller's view


def sound() -> Seen:
    message = {"message_id": "m-1", "state": "complained", "history": copy.deepcopy(HISTORY)}
    return Seen(message, dict(SUPPRESSED), settled=True)


def test_a_complaint_after_delivery_that_suppressed_passes_and_says_so() -> None:
    passed, detail = judge(sound())
    assert passed and detail == "delivered, then complained; recipient suppressed (complaint)"


def delivered_only(seen: Seen) -> None:
    seen.message["state"] = "delivered"
    seen.message["history"] = seen.message["history"][:3]
    seen.suppression = {"suppressed": False, "reason_class": None, "since": None}
    seen.settled = False


def complained_but_sendable(seen: Seen) -> None:
    seen.suppression["suppressed"] = False  # the reason alone proves nothing


def suppressed_for_another_reason(seen: Seen) -> None:
    seen.suppression["reason_class"] = "admin"


@pytest.mark.parametrize("breaks", [delivered_only, complained_but_sendable, suppressed_for_another_reason])
def test_the_row_fails_when_the_complaint_did_not_suppress(breaks: Any) -> None:
    seen = sound()
    breaks(seen)
    assert judge(seen)[0] is False


def test_the_times_are_read_from_the_record_step_by_step() -> None:
    times = measured(sound())
    assert times == {
        "request_to_accepted_seconds": 0.25,
        "accepted_to_final_seconds": 1.75,  # to the delivery's entry: when the stack knew it
        "complaint_to_suppressed_seconds": 2.0,  # from the provider's complaint time
    }
    assert describe(times) == ["request -> accepted 0.250 s", "accepted -> final event 1.750 s",
                               "complaint -> suppressed 2.000 s"]  # fmt: skip


def test_a_step_the_record_does_not_show_is_not_measured() -> None:
    seen = sound()
    delivered_only(seen)
    times = measured(seen)
    assert times["complaint_to_suppressed_seconds"] is None and times["accepted_to_final_seconds"] == 1.75
    assert describe(times)[2] == "complaint -> suppressed n/a"
