"""Oracles written from the documents, not from the code: SMS and SES classification, the lifecycle.

Every expectation below is literal data copied from a document, never built from the product's
own lists or tables, so a change to those lists is caught instead of copied:

- SMS: the SNS delivery-status `providerResponse` strings AWS documents
  (fixtures/aws-formats/README.md, "SNS SMS failure providerResponse strings documented by
  AWS"), classified by the SMS suppression rule. AWS does not classify them; the rule does:
  invalid number, opted out, blocked SMS and the blocked-list strings (current and older
  wording) suppress; every other failure is transient (the message ends `failed`, the number
  stays sendable). The README does not say AWS varies case or punctuation, so no variants.
- SES: the bounce types and subtypes of the SES event contents (same README, "SES bounce
  subtypes"; RFC 3463 with 5.2.2 treated as transient) and the email suppression rule (permanent
  bounce and complaint suppress, transient bounces count toward the 3-in-7-days limit).
- Lifecycle: the message state diagram, edge by edge, written out by hand in lifecycle_oracle.py
  with the edges its rules add (outcomes never regress, delivery evidence proves acceptance).
"""

from __future__ import annotations

import copy
import itertools
import json
from collections import Counter

import pytest

from sendledger import bootstrap
from sendledger.domain.messages import MessageState, can_transition, predecessors
from sendledger.domain.outcomes import target_state
from sendledger.domain.suppression_rules import Action, verdict_for
from sendledger.handlers import sms_delivery_logs
from sendledger.providers.ses.events import classify_bounce as classify_ses_bounce
from sendledger.providers.ses.events import parse_ses_record
from sendledger.providers.sns.events import classify_failure as classify_sms_failure
from sendledger.providers.sns.events import encode_subscription_event, parse_sms_record
from tests.integration.conftest import FAILURE_GROUP, fixture, ses_record
from tests.reliability.lifecycle_oracle import LIFECYCLE_EDGES, LIFECYCLE_STATES
from tests.support.fakes import ADMIN, FakeLambdaContext
from tests.support.outbox import sent_emails, sent_sms

SUPPRESS, TRANSIENT = "suppress", "transient"

# --- SMS: providerResponse → action ---------------------------------------------------------

SMS_DOCUMENTED = [
    # these suppress at once
    ("Invalid phone number", SUPPRESS),
    ("Phone number is opted out", SUPPRESS),
    ("Phone has blocked SMS", SUPPRESS),
    ("Phone is on a blocked list", SUPPRESS),
    ("Phone is blacklisted", SUPPRESS),  # the older wording of the one above
    ("Destination is on a blocked list", SUPPRESS),
    ("Destination is blacklisted", SUPPRESS),  # the older wording of the one above
    # every other failure is transient
    ("Blocked as spam by phone carrier", TRANSIENT),
    ("Message body is invalid", TRANSIENT),
    ("Phone carrier has blocked this message", TRANSIENT),
    ("Phone carrier is currently unreachable/unavailable", TRANSIENT),
    ("Phone is currently unreachable/unavailable", TRANSIENT),
    ("This delivery would exceed max price", TRANSIENT),
    ("Unknown error attempting to reach phone", TRANSIENT),
]
SMS_ACTION = {SUPPRESS: Action.SUPPRESS, TRANSIENT: Action.NONE}
UNDOCUMENTED_SMS = "Carrier says: try again on the moon"


def sms_failure_record(response: str, destination: str = "+12065550120", message_id: str | None = None) -> str:
    """The documented failure sample (sns-sms-delivery-failure.json) with another providerResponse."""
    record = fixture("sns-sms-delivery-failure.json")
    record["delivery"]["providerResponse"] = response
    record["delivery"]["destination"] = destination
    if message_id is not None:
        record["notification"]["messageId"] = message_id
    return json.dumps(record)


@pytest.mark.parametrize(("response", "expected"), SMS_DOCUMENTED)
def test_documented_sms_failure_strings(response, expected):
    verdict = classify_sms_failure(response)
    assert verdict.action is SMS_ACTION[expected]
    assert verdict.known  # documented: never logged as an unknown provider string


@pytest.mark.parametrize(("response", "expected"), SMS_DOCUMENTED)
def test_documented_sms_failure_strings_through_the_parser(response, expected):
    # A delivery-status record in the documented shape, read by the parser the handlers use
    event = parse_sms_record(sms_failure_record(response))
    assert event.provider_response == response
    assert target_state(event) is MessageState.FAILED  # transient or not, the message ends failed
    assert verdict_for(event).action is SMS_ACTION[expected]


def test_an_undocumented_sms_string_is_transient_and_flagged():
    verdict = verdict_for(parse_sms_record(sms_failure_record(UNDOCUMENTED_SMS)))
    assert verdict.action is Action.NONE and not verdict.known


def test_every_documented_sms_failure_through_the_subscription_handler(api, ingestion, healthy_watermarks, monkeypatch):
    # Given one accepted SMS per row, each to a number of its own

    monkeypatch.setattr(bootstrap, "runtime", lambda: ingestion.services)
    rows = [*SMS_DOCUMENTED, (UNDOCUMENTED_SMS, TRANSIENT)]
    sent = {}
    for index, (response, _) in enumerate(rows):
        number = f"+120655501{10 + index:02d}"
        body = {"channel": "sms", "to": number, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}
        _, _, view = api("POST", "/v1/messages", body, headers={"Idempotency-Key": f"oracle-sms-{index}"})
        assert view["state"] == "accepted"
        sent[response] = (number, view)
    # When SNS logs each documented failure and the subscription delivers them in one batch
    document = fixture("cloudwatch-logs-subscription-decoded.json")
    document["logGroup"] = FAILURE_GROUP
    document["logEvents"] = [
        {
            "id": str(index),
            "timestamp": 1795946405120,
            "message": sms_failure_record(response, number, view["provider_message_id"]),
        }
        for index, (response, (number, view)) in enumerate(sent.items())
    ]
    answer = sms_delivery_logs.lambda_handler(encode_subscription_event(document), FakeLambdaContext())
    assert answer["applied"] == len(rows)
    # Then every message failed, and a number is suppressed exactly when its string suppresses
    states = {
        response: api("GET", f"/v1/messages/{view['message_id']}")[2]["state"] for response, (_, view) in sent.items()
    }
    assert states == {response: "failed" for response, _ in rows}
    suppressed = {
        response: api("GET", f"/v1/suppressions/{number.replace('+', '%2B')}")[2]["suppressed"]
        for response, (number, _) in sent.items()
    }
    assert suppressed == {response: expected == SUPPRESS for response, expected in rows}
    # And nothing was sent again
    assert len(sent_sms()) == len(rows)


# --- SES: bounce type / subtype → action ------------------------------------------------------

COUNTS = "counts toward the transient limit"

SES_BOUNCES = [
    # (bounceType, bounceSubType, the recipient's SMTP status, expected)
    ("Permanent", "General", "5.1.1", SUPPRESS),
    ("Permanent", "NoEmail", "5.1.1", SUPPRESS),
    ("Permanent", "Suppressed", "5.1.1", SUPPRESS),
    ("Permanent", "OnAccountSuppressionList", None, SUPPRESS),
    ("Permanent", "General", "5.2.2", COUNTS),  # RFC 3463 5.2.2 mailbox full: best treated as transient
    ("Transient", "General", "4.4.7", COUNTS),
    ("Transient", "MailboxFull", "4.2.2", COUNTS),
    ("Transient", "MessageTooLarge", "5.3.4", COUNTS),
    ("Transient", "ContentRejected", "5.7.1", COUNTS),
    ("Transient", "AttachmentRejected", "5.7.1", COUNTS),
    ("Undetermined", "Undetermined", None, COUNTS),
]
SES_ACTION = {SUPPRESS: Action.SUPPRESS, COUNTS: Action.COUNT_TRANSIENT}


def ses_bounce(bounce_type: str, subtype: str, status: str | None) -> dict:
    record = copy.deepcopy(fixture("ses-bounce-permanent.json"))
    record["bounce"]["bounceType"] = bounce_type
    record["bounce"]["bounceSubType"] = subtype
    for recipient in record["bounce"]["bouncedRecipients"]:
        recipient.pop("status", None)
        if status is not None:
            recipient["status"] = status
    return record


@pytest.mark.parametrize(("bounce_type", "subtype", "status", "expected"), SES_BOUNCES)
def test_documented_ses_bounces(bounce_type, subtype, status, expected):
    assert classify_ses_bounce(bounce_type, subtype, status).action is SES_ACTION[expected]


@pytest.mark.parametrize(("bounce_type", "subtype", "status", "expected"), SES_BOUNCES)
def test_documented_ses_bounces_through_the_parser(bounce_type, subtype, status, expected):
    [event] = parse_ses_record(ses_bounce(bounce_type, subtype, status))
    assert (event.bounce_type, event.bounce_subtype) == (bounce_type, subtype)
    assert target_state(event) is MessageState.BOUNCED  # SES publishes only bounces it gave up on
    assert verdict_for(event).action is SES_ACTION[expected]


@pytest.mark.parametrize(("bounce_type", "subtype", "status", "expected"), SES_BOUNCES)
def test_documented_ses_bounces_are_not_logged_as_unknown(bounce_type, subtype, status, expected):
    assert classify_ses_bounce(bounce_type, subtype, status).known
    [event] = parse_ses_record(ses_bounce(bounce_type, subtype, status))
    assert event.verdict is not None and event.verdict.known


@pytest.mark.parametrize("missing", ["bounceType", "bounceSubType"])
def test_a_bounce_without_its_type_is_an_unknown_outcome(missing):
    # Only what SES documents is known: a record missing a field is logged for a person to read
    record = ses_bounce("Undetermined", "Undetermined", None)
    del record["bounce"][missing]
    [event] = parse_ses_record(record)
    assert event.verdict is not None and not event.verdict.known
    assert verdict_for(event).action is Action.COUNT_TRANSIENT


def test_documented_ses_complaint_suppresses():
    [event] = parse_ses_record(fixture("ses-complaint.json"))
    assert target_state(event) is MessageState.COMPLAINED
    assert verdict_for(event).action is Action.SUPPRESS


def test_every_documented_bounce_through_the_poller(api, ingestion, healthy_watermarks):
    # Given one accepted email per row, each to an address of its own
    sent = []
    for index, row in enumerate(SES_BOUNCES):
        to = f"bounce-oracle-{index}@example.com"
        body = {"channel": "email", "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}
        _, _, view = api("POST", "/v1/messages", body, headers={"Idempotency-Key": f"oracle-ses-{index}"})
        sent.append((row, to, view))
    # When SES publishes one bounce of each documented type, and the poller drains the queue
    for (bounce_type, subtype, status, _), to, view in sent:
        record = ses_bounce(bounce_type, subtype, status)
        record["mail"]["messageId"] = f"ses-{view['message_id']}"
        record["mail"]["tags"]["sendledger-message-id"] = [view["message_id"]]
        record["mail"]["destination"] = [to]
        record["bounce"]["bouncedRecipients"][0]["emailAddress"] = to
        ingestion.publish(record)
    assert ingestion.poll().applied == len(SES_BOUNCES)
    # Then every message bounced; one bounce suppresses only when permanent (3 transient ones are needed)
    states = {row: api("GET", f"/v1/messages/{view['message_id']}")[2]["state"] for row, _, view in sent}
    assert states == {row: "bounced" for row in SES_BOUNCES}
    suppressed = {row: api("GET", f"/v1/suppressions/{to.replace('@', '%40')}")[2]["suppressed"] for row, to, _ in sent}
    assert suppressed == {row: row[3] == SUPPRESS for row in SES_BOUNCES}


# --- the lifecycle, every pair of states ------------------------------------------------------

PAIRS = sorted(itertools.product(LIFECYCLE_STATES, repeat=2))


def test_the_product_has_exactly_the_oracles_states():
    assert {state.value for state in MessageState} == LIFECYCLE_STATES


@pytest.mark.parametrize(("current", "target"), PAIRS, ids=[f"{a}->{b}" for a, b in PAIRS])
def test_every_pair_of_states_against_the_oracle(current, target):
    assert can_transition(MessageState(current), MessageState(target)) is ((current, target) in LIFECYCLE_EDGES)


@pytest.mark.parametrize("target", sorted(LIFECYCLE_STATES))
def test_the_conditional_writes_allow_list_is_the_oracles(target):
    # predecessors() is what the ledger's conditional writes accept for `target`
    expected = {current for current, to in LIFECYCLE_EDGES if to == target}
    assert {state.value for state in predecessors(MessageState(target))} == expected


# --- forbidden edges, through the ledger's real conditional writes ---------------------------

EMAIL = {"channel": "email", "to": "alice@example.com", "template": {"id": "alert", "version": "1"}}


class Report(Counter):
    def bump(self, what: str, message_id: str | None = None, since: object = None) -> None:
        self[what] += 1


def _send(api, key="oracle-edge"):
    _, _, view = api("POST", "/v1/messages", {**EMAIL, "params": {"summary": "s"}}, headers={"Idempotency-Key": key})
    return view


def _event(ingestion, clock, view, kind):
    clock.advance(2)
    ingestion.publish(ses_record(kind, view["message_id"], EMAIL["to"], clock.now(), view["provider_message_id"]))
    ingestion.poll()


def _resend(services, ingestion, view):
    """The retry path's resend of the message as read now (its write asks for predecessors(sending))."""
    report = Report()
    ingestion.services.unknown.resender.resend(services.messages.get(view["message_id"]), lambda: 300.0, report)
    return report


def accepted_then_resent(api, services, ingestion, clock):
    view = _send(api)
    return view, _resend(services, ingestion, view)


def suppressed_then_resent(api, services, ingestion, clock):
    # A send refused for suppression; the address is re-enabled later; the old message stays refused
    api("PUT", "/v1/admin/suppressions/alice%40example.com", {"reason": "asked"}, principal=ADMIN)
    view = _send(api)
    api("DELETE", "/v1/admin/suppressions/alice%40example.com", query={"reason": "new mailbox"}, principal=ADMIN)
    return view, _resend(services, ingestion, view)


def delivered_then_late_send_event(api, services, ingestion, clock):
    view = _send(api)
    _event(ingestion, clock, view, "Delivery")
    _event(ingestion, clock, view, "Send")
    return view, None


def bounced_then_late_delivery(api, services, ingestion, clock):
    view = _send(api)
    _event(ingestion, clock, view, "Bounce")
    _event(ingestion, clock, view, "Delivery")
    return view, None


FORBIDDEN = {
    ("accepted", "sending"): accepted_then_resent,
    ("suppressed", "sending"): suppressed_then_resent,
    ("delivered", "accepted"): delivered_then_late_send_event,
    ("bounced", "delivered"): bounced_then_late_delivery,
}


@pytest.mark.parametrize(("edge", "drive"), FORBIDDEN.items(), ids=[f"{a}->{b}" for a, b in FORBIDDEN])
def test_the_ledger_refuses_a_forbidden_edge(api, services, ingestion, clock, healthy_watermarks, edge, drive):
    current, target = edge
    assert edge not in LIFECYCLE_EDGES
    emails_before = len(sent_emails())
    view, report = drive(api, services, ingestion, clock)
    stored = api("GET", f"/v1/messages/{view['message_id']}")[2]
    # The row keeps its state, and the latest history entry that set a state still names it
    assert stored["state"] == current, stored
    assert [entry["state"] for entry in stored["history"] if entry["state"]][-1] == current
    if report is not None:
        # The resend's conditional write was refused: nothing sent again, nothing written
        assert report == {"resend_moved_on": 1}
        assert "resend" not in [entry["type"] for entry in stored["history"]]
        assert len(sent_emails()) == emails_before + (1 if current == "accepted" else 0)
    else:
        # The late event is on record as evidence that did not move the message
        [late] = [entry for entry in stored["history"] if entry.get("would_be") == target]
        assert late["state"] is None and late["state_unchanged"] == current
