"""The provider events the state machine publishes for a sent message, per email provider leg.

Regression (the SendGrid leg, SENDLEDGER_HYPOTHESIS_SEED=3918033448): the state machine read a
message's address from an item attribute the ledger no longer writes (`to`, now `recipient`),
so every Delivery, Bounce and Complaint it published named no recipient. SendGrid's parser
refuses an event without `email`: left in the events queue for the DLQ (the test world has no
redrive), it held the sendgrid watermark, and a later send whose request was lost stayed
`unknown` after quiescence. Under SES and Mailgun the same events suppressed nobody.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.reliability.conftest import SharedWorld, shared_world
from tests.reliability.faults import merged_state, recipient_of, scan
from tests.reliability.provider_legs import LEGS

SETTLED_SENT = {"accepted", "delivered"}
# The legs whose events name the recipient (Infrai's status poll asks by id, on its own schedule).
ADDRESSED = [leg for leg in LEGS if leg != "infrai"]


@pytest.fixture(scope="module", params=ADDRESSED)
def world(request: pytest.FixtureRequest) -> Iterator[SharedWorld]:
    with shared_world(request.param) as shared:
        yield shared


def send(world: SharedWorld, key: str, to: str) -> str:
    payload = {"channel": "email", "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "a"}}
    answer = world.client("POST", "/v1/messages", payload, headers={"Idempotency-Key": key})
    assert answer.status == 202, answer
    return str(answer.body["message_id"])


def test_a_published_bounce_names_its_recipient_and_a_later_lost_send_settles(world):
    # Given a mail the provider accepted, and its bounce published as the state machine publishes it
    world.fresh()
    bounced = send(world, "outcome-bounced", "ann@example.com")
    assert merged_state(scan(), bounced) == "accepted"
    world.leg.publish("Bounce", bounced, recipient_of(bounced), f"Bounce-{bounced}")
    # When the poller runs
    report = world.poll()
    # Then the event is read (nothing is left holding the watermark) and suppresses its recipient
    assert not report.poison, report.summary()
    assert world.services.recipients.get("email:ann@example.com").suppression.suppressed
    # And a later send whose request never reached the provider settles once the watermark
    # passes its grace: absence proven, one resend
    lost = send(world, "outcome-lost", "bob+timeout-lost@example.com")
    assert merged_state(scan(), lost) == "unknown"
    settings = world.services.settings
    for _ in range(3):
        world.clock.advance(settings.unknown_grace_seconds + 60)
        world.leg.emit()
        report = world.poll()
        assert not report.poison, report.summary()
        if merged_state(scan(), lost) in SETTLED_SENT:
            break
    assert merged_state(scan(), lost) in SETTLED_SENT
    assert len(world.leg.emails_to("bob+timeout-lost@example.com")) == 1
