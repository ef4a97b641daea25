"""The in-memory fakes keep the DynamoDB stores' word: the same scenarios, the same results.

Each scenario drives one backend's stores (directly, or through a use case where that is the
shortest way to a realistic item) and returns what the stores answered: conflicts, transitions,
apply results, due items, messages as read back. It runs against the fakes (tests/unit/fakes)
and against the DynamoDB stores in moto, from the same clock, and the two answers must be equal.
Each scenario also asserts the behaviour it is about, so the two cannot agree on a wrong answer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from sendledger.adapters.dynamodb.ledger import LedgerTable
from sendledger.bootstrap import Runtime
from sendledger.domain.eligibility import StalePolicy
from sendledger.domain.errors import DependencyUnavailable
from sendledger.domain.events import EventKind
from sendledger.domain.export_window import Window
from sendledger.domain.flags import FlagDecision
from sendledger.domain.idempotency import scoped_key
from sendledger.domain.ids import keyed_message_id
from sendledger.domain.messages import DueKind, HistoryEntry, HistoryType, MessageState, Transition, predecessors
from sendledger.domain.provider import Backoff
from sendledger.domain.recipients import Channel, parse_recipient
from sendledger.domain.template_folder import TemplateFolder
from sendledger.ports.ingestion import ApplyResult, SmsMatch, SmsSendFound
from sendledger.ports.messages import Expectations, LastSendCondition, Outcome, SendIntent, StoredResponse
from sendledger.ports.resets import Replacement, ResetRecord
from sendledger.ports.status_out import AcceptedSms
from sendledger.settings import Settings
from sendledger.usecases.ingest import SMS_RECEIPT_LAG_SECONDS, IngestReport
from sendledger.usecases.intents import first_entry, new_message
from sendledger.usecases.views import message_view
from tests.conftest import TABLE
from tests.support.fakes import ADMIN, CALLER, FakeClock, FakeSleeper, caller_id, recent_start
from tests.unit.fakes import TIMEOUT_LOST, FakeEmailSender, FakeLedger, FakeSmsSender
from tests.unit.helpers import ALICE, PHONE, command, seconds_left, ses_event, sms_event

S = MessageState
ALICE_KEY = f"email:{ALICE}"


@dataclass
class Backend:
    """One backend's stores, and a runtime over them (fake providers on both sides)."""

    name: str
    ledger: Any  # LedgerTable | FakeLedger: the same store attributes
    services: Runtime
    clock: FakeClock

    def now(self) -> datetime:
        return self.clock.now()

    def ingest(self, event: Any) -> ApplyResult:
        return self.services.sink.apply(event, IngestReport())

    def apply(self, event: Any, message_id: str | None = None, receipt_id: str | None = None) -> ApplyResult:
        """The store's apply alone (no fallback to the destination's last send)."""
        return self.ledger.events.apply(self.services.sink.plan_for(event, message_id, receipt_id))

    def send(self, key: str = "key-1", **changes: Any) -> str:
        return str(self.services.sender.send(command(key, **changes), seconds_left).view["message_id"])


ALERT = TemplateFolder().get("alert", "1")
assert ALERT is not None


def backend(name: str, ledger_on: Callable[[FakeClock], Any], start: datetime) -> Backend:
    clock = FakeClock(start)
    ledger = ledger_on(clock)
    settings = Settings(table_name=TABLE, poll_interval_seconds=60)
    services = Runtime.over(
        ledger,
        email=FakeEmailSender(),
        sms=FakeSmsSender(),
        clock=clock,
        settings=settings,
        sleep=FakeSleeper(clock=clock),
        backoff=Backoff(rng=lambda: 0.5),
    )
    return Backend(name, ledger, services, clock)


# No flag decided: the deployment's settings did (what first_entry records for most sends).
DEPLOYMENT_DECIDED = FlagDecision(email_provider=None, stale_eligibility_policy=StalePolicy.ALLOW)


def intent(
    now: datetime,
    key: str | None = "key-1",
    to: str = ALICE,
    expect: Expectations | None = None,
    message_id: str | None = None,
    escalation: dict[str, Any] | None = None,
    reset: ResetRecord | None = None,
    window_start: datetime | None = None,
) -> SendIntent:
    """A send's intent as the send path builds it (keyed: its message id derives from the key)."""
    recipient = parse_recipient(Channel.EMAIL, to)
    cmd = command(key, to=to, escalation=escalation)
    scoped = scoped_key(CALLER, key) if key else None
    message_id = message_id or (keyed_message_id(scoped) if scoped else None)
    message = new_message(cmd, recipient, now, message_id, provider="ses")
    return SendIntent(
        message=message,
        first_entry=first_entry(message, recipient, now, DEPLOYMENT_DECIDED, ALERT),
        lease_until=now + timedelta(seconds=60),
        expectations=expect or Expectations(),
        idempotency_key=scoped,
        fingerprint=f"fingerprint-of-{key}" if key else None,
        idempotency_expires_at=now + timedelta(days=30) if key else None,
        reset=reset,
        reset_window_start=window_start,
    )


def entry(at: datetime, kind: HistoryType, state: MessageState | None = None, step: int = 1) -> HistoryEntry:
    return HistoryEntry(at=at, type=kind, state=state, evidence={"by": "contract"}, step=step)


def view(b: Backend, message_id: str) -> dict[str, Any]:
    """The message as read back, with its history (what GET /v1/messages/{id} shows)."""
    message = b.ledger.messages.get(message_id)
    assert message is not None, f"{b.name}: {message_id} missing"
    return {**message_view(message, b.services.settings, with_history=True), "attempt": message.attempt}


# --- scenarios ------------------------------------------------------------------------------------


def keyed_intent_collides_with_its_record(b: Backend) -> list[Any]:
    first = intent(b.now())
    assert b.ledger.messages.commit_intent(first) is None
    b.clock.advance(2)
    in_flight = b.ledger.messages.commit_intent(intent(b.now()))
    assert in_flight is not None and in_flight.existing is not None, b.name
    assert not in_flight.existing.completed and in_flight.existing.message_id == first.message.message_id
    # The recipient's marker moved with the first intent: its condition is reported too
    assert in_flight.recipient is not None and in_flight.recipient.last_message_id == first.message.message_id
    done = replace(first.message, state=S.ACCEPTED, provider_message_id="ses-1", updated_at=b.now())
    outcome = entry(b.now(), HistoryType.PROVIDER_OUTCOME, S.ACCEPTED)
    b.ledger.messages.record_outcome(
        Outcome(
            done,
            S.ACCEPTED,
            outcome,
            idempotency_key=first.idempotency_key,
            stored_response=StoredResponse.of(done),
        )
    )
    answered_conflict = b.ledger.messages.commit_intent(intent(b.now()))
    assert answered_conflict is not None and answered_conflict.existing is not None
    record = answered_conflict.existing
    assert record.completed and record.response is not None and record.response.message.state is S.ACCEPTED
    stored_view = message_view(record.response.message, b.services.settings)
    return [in_flight, record, stored_view, view(b, first.message.message_id)]


def suppressed_recipient_refuses_the_send(b: Backend) -> list[Any]:
    suppressed = b.ledger.recipients.change(ALICE_KEY, True, "user asked", ADMIN, 0, b.now())
    optimistic = b.ledger.messages.commit_intent(intent(b.now()))
    assert optimistic is not None and optimistic.recipient is not None and optimistic.existing is None
    assert optimistic.recipient.suppression.suppressed and optimistic.recipient.suppression.version == 1
    assert b.ledger.messages.get(intent(b.now()).message.message_id) is None, "nothing written"
    exact = b.ledger.messages.commit_intent(intent(b.now(), expect=Expectations(suppression_version=1)))
    assert exact is not None and exact.recipient is not None, "a suppressed recipient refuses at any version"
    decided = intent(b.now())
    decided.message.state = S.SUPPRESSED
    assert b.ledger.messages.commit_decided(decided, StoredResponse.of(decided.message)) is None
    b.clock.advance(1)
    b.ledger.recipients.record_unchanged(ALICE_KEY, True, "again", ADMIN, 1, b.now())
    with pytest.raises(DependencyUnavailable):
        b.ledger.recipients.change(ALICE_KEY, False, "stale", ADMIN, 0, b.now())  # not the version read
    return [
        suppressed,
        optimistic,
        exact,
        b.ledger.recipients.view(ALICE_KEY),
        view(b, decided.message.message_id),
    ]


def last_send_condition(b: Backend) -> list[Any]:
    sent_at = b.now()
    assert b.ledger.messages.commit_intent(intent(sent_at, key="a")) is None
    b.clock.advance(10)
    results = [
        b.ledger.messages.commit_intent(intent(b.now(), key=key, expect=Expectations(last_send=condition)))
        for key, condition in [
            ("b", LastSendCondition()),  # no earlier send at all: refused
            ("c", LastSendCondition(sent_at - timedelta(seconds=1))),  # knowable only before it: refused
            ("d", LastSendCondition(sent_at)),  # not after the watermark - grace: written
            ("e", LastSendCondition(sent_at, exact=True)),  # the marker as read, but it moved (d): refused
            ("f", LastSendCondition(b.now() + timedelta(hours=1), exact=True)),  # exact is not "not after"
        ]
    ]
    assert [result is None for result in results] == [False, False, True, False, False], b.name
    marker = b.ledger.recipients.get(ALICE_KEY)
    exact = b.ledger.messages.commit_intent(
        intent(b.now(), key="g", expect=Expectations(last_send=LastSendCondition(marker.last_send_at, exact=True)))
    )
    assert exact is None
    return [*results, marker, b.ledger.recipients.get(ALICE_KEY)]


def young_active_reset_stands(b: Backend) -> list[Any]:
    window = timedelta(seconds=600)

    def reset_intent(number: int) -> SendIntent:
        now = b.now()
        record = ResetRecord(
            CALLER, "acct-1", f"rst_{number}", "active", f"hash-{number}", now, now + window, 0, f"msg_reset_{number}"
        )
        knowable = Expectations(last_send=LastSendCondition(now))  # eligibility is not the point here
        return intent(
            now, key=None, expect=knowable, message_id=f"msg_reset_{number}", reset=record, window_start=now - window
        )

    assert b.ledger.messages.commit_intent(reset_intent(1)) is None
    b.clock.advance(60)
    second = b.ledger.messages.commit_intent(reset_intent(2))
    assert second is not None and second.reset is not None and second.reset.reset_id == "rst_1"
    assert b.ledger.messages.get("msg_reset_2") is None
    b.clock.advance(540)
    edge = b.ledger.messages.commit_intent(reset_intent(3))
    assert edge is not None and edge.reset is not None, "exactly the window old: still stands"
    b.clock.advance(1)
    assert b.ledger.messages.commit_intent(reset_intent(3)) is None, "past the window: replaced"
    wrong = b.ledger.resets.consume(CALLER, "acct-1", "hash-1", b.now())
    consumed = b.ledger.resets.consume(CALLER, "acct-1", "hash-3", b.now())
    again = b.ledger.resets.consume(CALLER, "acct-1", "hash-3", b.now())
    assert wrong is None and consumed is not None and consumed.state == "consumed" and again is None
    return [second, edge, consumed, b.ledger.resets.get(CALLER, "acct-1")]


def reset_lockout_and_rearm(b: Backend) -> list[Any]:
    now = b.now()
    record = ResetRecord(
        CALLER, "acct-2", "rst_9", "active", "unsent", now, now + timedelta(seconds=600), 0, "msg_reset_9"
    )
    mail = intent(now, key=None, message_id="msg_reset_9", reset=record, window_start=now)
    mail.message.state, mail.due = S.PENDING, (DueKind.PENDING, now)
    assert b.ledger.messages.commit_intent(mail) is None
    message = b.ledger.messages.get("msg_reset_9")
    start = entry(b.now(), HistoryType.RESET_MAIL, S.SENDING)
    armed = b.ledger.resets.rearm(record, "hash-a", message, start, b.now() + timedelta(seconds=60))
    assert armed
    assert b.ledger.resets.get(CALLER, "acct-2").token_hash == "hash-a", "the mint swapped the hash in"
    with pytest.raises(DependencyUnavailable):  # the hash moved on: a stale re-arm never lands
        b.ledger.resets.rearm(record, "hash-b", message, start, b.now())
    live = b.ledger.resets.get(CALLER, "acct-2")
    for _ in range(2):
        b.ledger.resets.record_failed_attempt(live, 3, b.now())
    counted = b.ledger.resets.get(CALLER, "acct-2")
    b.ledger.resets.record_failed_attempt(live, 3, b.now())
    locked = b.ledger.resets.get(CALLER, "acct-2")
    assert (counted.state, counted.failed_attempts, locked.state) == ("active", 2, "invalidated"), b.name
    assert b.ledger.resets.consume(CALLER, "acct-2", "hash-a", b.now()) is None
    # Suppressed meanwhile: the re-arm reports it and writes nothing
    b.ledger.recipients.change("email:bob@example.com", True, "complaint", ADMIN, 0, b.now())
    other = ResetRecord(
        CALLER, "acct-3", "rst_8", "active", "unsent", now, now + timedelta(seconds=600), 0, "msg_reset_8"
    )
    bob = intent(now, key=None, to="bob@example.com", message_id="msg_reset_8", reset=other, window_start=now)
    bob.message.state, bob.due = S.PENDING, (DueKind.PENDING, now)
    assert b.ledger.messages.commit_decided(bob, None) is None
    refused = b.ledger.resets.rearm(other, "hash-c", b.ledger.messages.get("msg_reset_8"), start, b.now())
    assert refused is False
    return [counted, locked, view(b, "msg_reset_9"), b.ledger.resets.get(CALLER, "acct-3"), view(b, "msg_reset_8")]


def conditioned_transitions(b: Backend) -> list[Any]:
    b.services.email.then(TIMEOUT_LOST)
    message_id = b.send()
    messages, at = b.ledger.messages, b.now()
    results = [
        messages.transition("msg_nope", frozenset({S.UNKNOWN}), S.RETRY, [], None),
        messages.transition(
            message_id, frozenset({S.SENDING}), S.UNKNOWN, [entry(at, HistoryType.LEASE_EXPIRED)], None
        ),
        messages.transition(
            message_id,
            frozenset({S.UNKNOWN}),
            S.RETRY,
            [entry(at, HistoryType.ABSENCE_PROVEN, S.RETRY, 2)],
            (DueKind.PENDING, at),
            unless_evidence=True,
        ),
    ]
    b.ledger.recipients.change(ALICE_KEY, True, "user asked", ADMIN, 0, at)
    resend = [entry(at, HistoryType.RESEND, S.SENDING, 3)]
    results.append(
        messages.transition(message_id, predecessors(S.SENDING), S.SENDING, resend, None, 2, unsuppressed=ALICE_KEY)
    )
    b.ledger.recipients.change(ALICE_KEY, False, "mistake", ADMIN, 1, at)
    b.ingest(ses_event(EventKind.DELIVERY_DELAY, message_id, at))  # an event lands on the receipt
    results.append(
        messages.transition(
            message_id,
            predecessors(S.SENDING),
            S.SENDING,
            resend,
            None,
            2,
            unsuppressed=ALICE_KEY,
            unless_evidence=True,
        )
    )
    results.append(messages.transition(message_id, predecessors(S.SENDING), S.SENDING, resend, None, 2))
    T = Transition
    assert results == [T.MOVED_ON, T.MOVED_ON, T.APPLIED, T.SUPPRESSED, T.MOVED_ON, T.APPLIED], (b.name, results)
    return [*results, view(b, message_id), messages.idempotency_key_of(message_id)]


def events_once_and_never_backwards(b: Backend) -> list[Any]:
    message_id = b.send()
    at = b.now()
    bounce = ses_event(EventKind.BOUNCE, message_id, at, event_id="bounce-1")
    results = [b.ingest(bounce), b.ingest(bounce)]
    b.clock.advance(30)
    results.append(b.ingest(ses_event(EventKind.DELIVERY, message_id, at - timedelta(seconds=5))))  # late
    b.clock.advance(1)  # (entries of one millisecond and step are unordered in the table)
    results.append(b.ingest(ses_event(EventKind.BOUNCE, message_id, b.now(), event_id="bounce-2")))
    results.append(b.ingest(ses_event(EventKind.COMPLAINT, None, b.now(), recipient="carol@example.com")))
    results.append(b.ingest(ses_event(EventKind.COMPLAINT, None, b.now(), recipient="carol@example.com")))
    first, duplicate, late, second, unmatched, unmatched_again = results
    assert first.suppressed_now and first.message_updated and duplicate.duplicate, b.name
    assert not late.message_updated and late.prior_state == "bounced"
    assert second.already_suppressed and not second.suppressed_now
    assert unmatched.suppressed_now and unmatched_again.duplicate
    return [*results, view(b, message_id), b.ledger.recipients.view(ALICE_KEY), b.ledger.recipients.get(ALICE_KEY)]


def transient_bounces_count_in_their_window(b: Backend) -> list[Any]:
    message_id = b.send()
    results = []
    for n in range(4):
        b.clock.advance(3600)
        event = ses_event(EventKind.BOUNCE, message_id, b.now(), event_id=f"t-{n}", bounce=("Transient", "MailboxFull"))
        results.append(b.ingest(event))
    assert [r.transient_count for r in results] == [1, 2, 3, None] and results[2].suppressed_now, b.name
    # An address an admin suppressed: its first transient bounce is counted, the next is not
    b.ledger.recipients.change("email:dave@example.com", True, "asked", ADMIN, 0, b.now())
    for n in range(2):
        event = ses_event(
            EventKind.BOUNCE, None, b.now(), recipient="dave@example.com", event_id=f"d-{n}", bounce=("Transient", "X")
        )
        results.append(b.ingest(event))
    return [*results, b.ledger.recipients.get(ALICE_KEY), b.ledger.recipients.get("email:dave@example.com")]


def sms_receipts_and_the_destination_match(b: Backend) -> list[Any]:
    accepted = b.send(key="sms-1", channel=Channel.SMS, to=PHONE)
    # The send path does not write the receipt: alone, the store refuses a record naming only SNS's id
    early = b.apply(sms_event("sns-0001", b.now()), receipt_id="sns-0001")
    b.ledger.sms_receipts.write(AcceptedSms(accepted, "sns-0001", escalates=False))  # the publisher's
    on_receipt = b.apply(sms_event("sns-0001", b.now()), receipt_id="sns-0001")
    b.clock.advance(60)
    b.services.sms.then(TIMEOUT_LOST)
    timed_out = b.send(key="sms-2", channel=Channel.SMS, to=PHONE)
    b.clock.advance(5)
    record = sms_event("sns-unseen", b.now(), success=False, response="Phone number is opted out")
    missing = b.apply(record, receipt_id="sns-unseen")
    found = b.ledger.events.message_for_provider_id("sns-unseen", f"sms:{PHONE}", b.now(), 300, record.dedupe_key)
    matched = b.ingest(record)
    again = b.ingest(record)
    too_late = b.ledger.events.message_for_provider_id("sns-other", f"sms:{PHONE}", b.now() + timedelta(hours=1), 300)
    assert early.no_receipt and on_receipt.message_updated and missing.no_receipt, b.name
    assert found == SmsSendFound(SmsMatch.UNKNOWN_ID, timed_out, False, requests=2), b.name
    assert matched.suppressed_now and again.duplicate
    assert too_late.match is SmsMatch.NONE and too_late.message_id is None
    return [early, on_receipt, missing, found, matched, again, too_late, view(b, accepted), view(b, timed_out)]


def sms_record_before_its_receipt(b: Backend) -> list[Any]:
    first = b.send(key="sms-a", channel=Channel.SMS, to=PHONE)
    b.clock.advance(10)
    second = b.send(key="sms-b", channel=Channel.SMS, to=PHONE)
    b.clock.advance(5)
    # The first send's record, before the publisher wrote either receipt: of the number's last
    # two sends, the first names its id; the record writes that receipt, naming the first send
    record = sms_event("sns-0001", b.now())
    landed = b.ingest(record)
    for message_id, provider_id in ((first, "sns-0001"), (second, "sns-0002")):  # the publisher, later
        b.ledger.sms_receipts.write(AcceptedSms(message_id, provider_id, escalates=False))
    again = b.ingest(record)
    # A record no recent send names while the number's last send is young: not applied, not guessed
    stray = sms_event("sns-elsewhere", b.now())
    with pytest.raises(DependencyUnavailable):
        b.ingest(stray)
    b.clock.advance(SMS_RECEIPT_LAG_SECONDS)
    unmatched = b.ingest(stray)  # no receipt can still come: recorded as a stray record
    assert landed.message_updated and landed.requests == 4 and again.duplicate and again.requests == 1, b.name
    assert not unmatched.duplicate and unmatched.requests == 4
    firsts, seconds = view(b, first), view(b, second)
    assert firsts["state"] == "delivered" and seconds["state"] == "accepted"
    return [landed, again, unmatched, firsts, seconds]


def due_work_index(b: Backend) -> list[Any]:
    b.services.email.then(TIMEOUT_LOST)
    unknown = b.send(key="u")
    bounced = b.send(key="b", to="bob@example.com")
    b.ingest(ses_event(EventKind.BOUNCE, bounced, b.now(), recipient="bob@example.com"))
    # The same failure, from an event that says the message does not escalate: no marker.
    said_no = b.send(key="n", to="nora@example.com")
    b.ingest(replace(ses_event(EventKind.BOUNCE, said_no, b.now(), recipient="nora@example.com"), escalates=False))
    escalating = b.send(key="e", to="erin@example.com", escalation={"deadline_seconds": 300, "fallback": []})
    in_flight = intent(b.now(), key="i", to="ivy@example.com")
    b.ledger.messages.commit_intent(in_flight)
    due = b.ledger.due_work
    grace = timedelta(seconds=b.services.settings.unknown_grace_seconds)
    found = {kind: due.items(kind, b.now() + grace, 10) for kind in DueKind}
    early = due.items(DueKind.UNKNOWN, b.now(), 10)
    counts = {kind: due.count(kind) for kind in DueKind}
    assert [item.message_id for item in found[DueKind.UNKNOWN]] == [unknown] and early == [], b.name
    assert [(i.message_id, i.on_receipt) for i in found[DueKind.OUTCOME]] == [(bounced, True)]
    assert [i.message_id for i in found[DueKind.ESCALATION]] == [escalating]
    due.clear(unknown, DueKind.PENDING)  # not its marker: nothing happens
    due.clear(bounced, DueKind.OUTCOME, on_receipt=True)
    due.clear(in_flight.message.message_id, DueKind.INFLIGHT)
    after = {kind: due.count(kind) for kind in DueKind}
    assert after[DueKind.UNKNOWN] == 1 and after[DueKind.OUTCOME] == after[DueKind.INFLIGHT] == 0
    return [found, counts, after]


def escalation_timers_finish_once(b: Backend) -> list[Any]:
    escalation = {"deadline_seconds": 300, "fallback": []}
    failed = b.send(key="f", escalation=escalation)
    delivered = b.send(key="d", to="bob@example.com", escalation=escalation)
    b.ingest(ses_event(EventKind.DELIVERY, delivered, b.now(), recipient="bob@example.com"))
    b.clock.advance(301)
    done = entry(b.now(), HistoryType.ESCALATED, S.ESCALATED, step=4)
    timers = b.ledger.escalation_timers
    timers.finish(failed, done, escalate_message=True, outcome="escalated")
    timers.finish(failed, done, escalate_message=True, outcome="escalated")  # a rerun: nothing more
    timers.finish(delivered, done, escalate_message=True, outcome="escalated")
    failed_view, delivered_view = view(b, failed), view(b, delivered)
    assert failed_view["state"] == "escalated" and delivered_view["state"] == "delivered", b.name
    assert [e["type"] for e in failed_view["history"]].count("escalated") == 1
    return [failed_view, delivered_view, b.ledger.due_work.items(DueKind.ESCALATION, None, 10)]


def poller_state_moves_forward(b: Backend) -> list[Any]:
    state, now = b.ledger.poller_state, b.now()
    state.set_watermark("ses", now)
    state.set_watermark("ses", now - timedelta(seconds=30))  # an older cycle finishing late
    cached = state.recent_watermark("ses", now + timedelta(seconds=1))
    state.set_watermark("ses", now + timedelta(seconds=10))
    still_cached = state.recent_watermark("ses", now + timedelta(seconds=2))
    fresh = state.recent_watermark("ses", now + timedelta(seconds=40))
    not_read = state.recent_watermark("sms", now, read=False)
    known = state.known_watermark("ses")  # the last read, however old (no read is made)
    never = state.known_watermark("sms")
    state.put_cursor("sms", None, "c1", now)
    with pytest.raises(DependencyUnavailable):
        state.put_cursor("sms", None, "c2", now)  # another poller moved it
    state.put_cursor("sms", "c1", "c2", now)
    assert (cached, still_cached, fresh) == (now, now, now + timedelta(seconds=10)) and not_read is None, b.name
    assert (known, never) == (now + timedelta(seconds=10), None), b.name
    return [cached, still_cached, fresh, not_read, known, never, state.watermark("sms"), state.cursor("sms")]


def evidence_index_pages(b: Backend) -> list[Any]:
    start = b.now()
    for number in range(5):
        mine = intent(b.now(), key=f"ev-{number}", to=f"mine{number}@example.com")
        assert b.ledger.messages.commit_intent(mine) is None
        theirs = intent(b.now(), key=f"other-{number}", to=f"theirs{number}@example.com")
        theirs.message.message_id = keyed_message_id(f"other#{number}")
        theirs.message.owner = "someone-else"
        assert b.ledger.messages.commit_intent(theirs) is None
        if number != 1:  # two of mine in one millisecond
            b.clock.advance(11 * 3600)
    owner = CALLER
    window = Window(start, b.now())
    pages, after = [], None
    while True:
        page = b.ledger.messages.created_in(owner, window, after, 2)
        pages.append(page)
        if not page.more:
            break
        after = page.positions[-1]
    found = [position.message_id for page in pages for position in page.positions]
    mine = {keyed_message_id(scoped_key(CALLER, f"ev-{number}")) for number in range(5)}
    assert len(found) == 5 and set(found) == mine and len(pages) == 3, b.name
    assert [p.created_at for page in pages for p in page.positions] == sorted(
        p.created_at for page in pages for p in page.positions
    )
    return [page.positions for page in pages]


def replaced_reset(b: Backend) -> list[Any]:
    window = timedelta(seconds=600)

    def reset_intent(number: int, to: str, replaces: ResetRecord | None = None) -> SendIntent:
        now = b.now()
        record = ResetRecord(
            CALLER,
            "acct-9",
            f"rst_{number}",
            "active",
            "unsent",
            now,
            now + window,
            0,
            f"msg_reset_{number}",
            parse_recipient(Channel.EMAIL, to).fingerprint,
        )
        knowable = Expectations(last_send=LastSendCondition(now))
        built = intent(
            now,
            key=None,
            to=to,
            expect=knowable,
            message_id=f"msg_reset_{number}",
            reset=record,
            window_start=now - window,
        )
        if replaces is not None:
            note = HistoryEntry(at=now, type=HistoryType.RESET_REPLACED, evidence={"replaced_by": f"rst_{number}"})
            built.replaces = Replacement(replaces, note)
        return built

    first = reset_intent(1, "old@example.com")
    assert b.ledger.messages.commit_intent(first) is None
    b.clock.advance(30)
    standing = b.ledger.messages.commit_intent(reset_intent(2, "new@example.com"))
    assert (
        standing is not None
        and standing.reset is not None
        and standing.reset.recipient_fingerprint == parse_recipient(Channel.EMAIL, "old@example.com").fingerprint
    )
    assert b.ledger.messages.commit_intent(reset_intent(3, "new@example.com", replaces=standing.reset)) is None
    # A replacement that names a reset no longer there meets the one that is
    stale = b.ledger.messages.commit_intent(reset_intent(4, "third@example.com", replaces=standing.reset))
    assert stale is not None and stale.reset is not None and stale.reset.reset_id == "rst_3", b.name
    old = b.ledger.messages.get("msg_reset_1")
    assert old is not None and old.history[-1].type is HistoryType.RESET_REPLACED
    return [standing, stale, b.ledger.resets.get(CALLER, "acct-9"), view(b, "msg_reset_1")]


def resets_are_per_caller(b: Backend) -> list[Any]:
    """Two callers' resets of one account id: two records, neither's write touches the other's."""
    now, window, other = b.now(), timedelta(seconds=600), caller_id("arn:aws:iam::123456789012:user/other-app")

    def reset_intent(owner: str, number: int) -> SendIntent:
        record = ResetRecord(
            owner, "42", f"rst_{number}", "active", f"hash-{number}", now, now + window, 0, f"msg_{number}"
        )
        knowable = Expectations(last_send=LastSendCondition(now))  # eligibility is not the point here
        to = f"user{number}@example.com"
        return intent(
            now, key=None, to=to, expect=knowable, message_id=f"msg_{number}", reset=record, window_start=now - window
        )

    assert b.ledger.messages.commit_intent(reset_intent(other, 1)) is None
    assert b.ledger.messages.commit_intent(reset_intent(CALLER, 2)) is None, "the victim's young reset is not mine"
    assert b.ledger.resets.consume(CALLER, "42", "hash-1", now) is None, "the victim's hash opens nothing of mine"
    mine = b.ledger.resets.get(CALLER, "42")
    for _ in range(3):
        b.ledger.resets.record_failed_attempt(mine, 3, now)
    theirs = b.ledger.resets.get(other, "42")
    untouched = (theirs.reset_id, theirs.state, theirs.token_hash, theirs.failed_attempts)
    assert untouched == ("rst_1", "active", "hash-1", 0), b.name
    return [b.ledger.resets.get(CALLER, "42"), theirs, b.ledger.resets.consume(other, "42", "hash-1", now)]


SCENARIOS: list[Callable[[Backend], list[Any]]] = [
    evidence_index_pages,
    replaced_reset,
    keyed_intent_collides_with_its_record,
    suppressed_recipient_refuses_the_send,
    last_send_condition,
    young_active_reset_stands,
    reset_lockout_and_rearm,
    resets_are_per_caller,
    conditioned_transitions,
    events_once_and_never_backwards,
    transient_bounces_count_in_their_window,
    sms_receipts_and_the_destination_match,
    sms_record_before_its_receipt,
    due_work_index,
    escalation_timers_finish_once,
    poller_state_moves_forward,
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.__name__ for s in SCENARIOS])
def test_the_fakes_answer_as_the_dynamodb_stores(aws: None, scenario: Callable[[Backend], list[Any]]):
    start = recent_start()
    dynamodb = scenario(backend("dynamodb", lambda clock: LedgerTable.named(TABLE, clock), start))
    memory = scenario(backend("memory", lambda clock: FakeLedger(), start))
    assert len(memory) == len(dynamodb)
    for index, (fake, real) in enumerate(zip(memory, dynamodb, strict=True)):
        assert fake == real, f"observation {index} differs: {_difference(fake, real)}"


def _difference(fake: Any, real: Any) -> str:
    """The first differing field, spelled out (the whole objects are too long to read)."""
    if dataclasses.is_dataclass(fake) and dataclasses.is_dataclass(real):
        for f in dataclasses.fields(fake):
            mine, theirs = getattr(fake, f.name), getattr(real, f.name)
            if mine != theirs:
                return f"{f.name}: " + _difference(mine, theirs)
    if isinstance(fake, dict) and isinstance(real, dict):
        for name in sorted(set(fake) | set(real), key=str):
            if fake.get(name) != real.get(name):
                return f"{name}: " + _difference(fake.get(name), real.get(name))
    if isinstance(fake, list) and isinstance(real, list) and len(fake) == len(real):
        for index, (mine, theirs) in enumerate(zip(fake, real, strict=True)):
            if mine != theirs:
                return f"[{index}] " + _difference(mine, theirs)
    return f"fake {fake!r} != dynamodb {real!r}"
