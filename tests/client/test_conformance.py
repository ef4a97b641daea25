"""The conformance conditions, judged from what a leg saw: each passes on a sound leg and fails
on the leg that breaks it (the end-to-end run is tests/local/test_conformance_local.py)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from sendledger_client.conformance import CONDITIONS, Observation, evaluate

SEND = {
    "at": "2026-12-03T10:00:01.000Z",
    "type": "provider_outcome",
    "provider_result": "ambiguous",
    "state": "unknown",
}
EVENT = {"at": "2026-12-03T10:00:03.000Z", "type": "event:Delivery", "provider_message_id": "p-1"}
MESSAGE = {"message_id": "m-1", "state": "delivered", "provider": "ses", "provider_message_id": "p-1",
           "history": [SEND, EVENT]}  # fmt: skip


def sound() -> Observation:
    return Observation(
        provider="ses",
        reset_ids=["r-1", "r-1"],
        reset={"state": "active", "token_versions": [{"version": 1, "invalidated_at": None}]},
        message=copy.deepcopy(MESSAGE),
        mailbox=[{"message_id": "m-1", "sent_at": "2026-12-03T10:00:01.000Z", "text": "token=abc"}],
        exported=[copy.deepcopy(MESSAGE)],
        consumed=[200],
    )


def results(seen: Observation) -> dict[str, bool]:
    return {row.condition: row.passed for row in evaluate(seen)}


def test_a_sound_leg_passes_every_condition() -> None:
    assert results(sound()) == dict.fromkeys(CONDITIONS, True)


def two_mails(seen: Observation) -> None:
    assert seen.mailbox is not None
    seen.mailbox.append({"message_id": "m-1", "sent_at": "2026-12-03T10:00:05.000Z", "text": "token=def"})


def second_token(seen: Observation) -> None:
    seen.reset["token_versions"].append({"version": 2, "invalidated_at": None})


def still_unknown(seen: Observation) -> None:
    seen.message.update(state="unknown", provider_message_id=None)
    seen.exported = [copy.deepcopy(seen.message)]


def resent_after_the_event(seen: Observation) -> None:
    resend = {"at": "2026-12-03T10:00:04.000Z", "type": "provider_outcome", "provider_result": "accepted"}
    seen.message["history"].append(resend)
    seen.exported = [copy.deepcopy(seen.message)]


def an_old_token_still_consumes(seen: Observation) -> None:
    seen.consumed = [200, 400]


def export_lost_it(seen: Observation) -> None:
    seen.exported = []


BREAKS: dict[str, Callable[[Observation], None]] = {
    "one_accepted_message": two_mails,
    "one_active_token": second_token,
    "final_id_or_unresolved": still_unknown,
    "no_blind_retry": resent_after_the_event,
    "no_second_valid_token": an_old_token_still_consumes,
    "evidence_exportable": export_lost_it,
}


@pytest.mark.parametrize("condition", CONDITIONS)
def test_each_condition_fails_on_the_leg_that_breaks_it(condition: str) -> None:
    seen = sound()
    BREAKS[condition](seen)
    assert results(seen)[condition] is False


def test_deployed_without_a_mailbox_it_judges_from_the_record() -> None:
    seen = sound()
    seen.mailbox, seen.consumed = None, []
    assert all(results(seen).values())
    other: dict[str, Any] = {"at": "2026-12-03T10:00:06.000Z", "type": "event:Delivery", "provider_message_id": "p-2"}
    seen.message["history"].append(other)
    assert results(seen)["one_accepted_message"] is False, "two provider ids: two accepted mails"
    seen.reset_ids = ["r-1", "r-2"]
    assert results(seen)["no_second_valid_token"] is False, "the retry made another reset"
    seen.message["state"], seen.message["provider_message_id"] = "unresolved", None
    assert results(seen)["final_id_or_unresolved"] is True, "explicitly unresolved is a final answer"


# --- no_blind_retry against scripted histories: a resend after any proof of acceptance is blind,
# even when a proof of absence came first; a resend after absence alone is sound.
LOST = {"at": "2026-12-03T10:00:01.000Z", "type": "provider_outcome", "provider_result": "ambiguous"}
ABSENT = {"at": "2026-12-03T10:05:00.000Z", "type": "absence_proven", "lookup": "not_found", "decision": "retry"}
RESEND = {"at": "2026-12-03T10:05:02.000Z", "type": "resend", "attempt": 2}
RESENT = {"at": "2026-12-03T10:05:02.500Z", "type": "provider_outcome", "provider_result": "accepted",
          "provider_message_id": "p-2"}  # fmt: skip
PROOFS_OF_ACCEPTANCE: dict[str, dict[str, Any]] = {
    "an event": {"at": "2026-12-03T10:05:01.000Z", "type": "event:Send", "provider_message_id": "p-1"},
    "a found lookup": {
        "at": "2026-12-03T10:05:01.000Z",
        "type": "provider_lookup",
        "lookup": "found",
        "decision": "accepted",
        "provider_message_id": "p-1",
    },
    "an accepted outcome": {
        "at": "2026-12-03T10:05:01.000Z",
        "type": "provider_outcome",
        "provider_result": "accepted",
        "provider_message_id": "p-1",
    },
}


def leg_with(history: list[dict[str, Any]], mails: list[str]) -> Observation:
    seen = sound()
    seen.message["history"] = copy.deepcopy(history)
    seen.mailbox = [{"message_id": "m-1", "sent_at": at, "text": "token=abc"} for at in mails]
    return seen


def test_a_resend_after_proven_absence_alone_is_not_blind() -> None:
    seen = leg_with([LOST, ABSENT, RESEND, RESENT], mails=[RESENT["at"]])
    assert results(seen)["no_blind_retry"] is True
    late = {"at": "2026-12-03T10:05:04.000Z", "type": "event:Delivery", "provider_message_id": "p-2"}
    seen = leg_with([LOST, ABSENT, RESEND, RESENT, late], mails=[RESENT["at"]])
    assert results(seen)["no_blind_retry"] is True, "the resend's own events come after it"


def test_a_resend_without_a_proof_of_absence_is_blind() -> None:
    assert results(leg_with([LOST, RESEND, RESENT], mails=[RESENT["at"]]))["no_blind_retry"] is False


@pytest.mark.parametrize("proof", list(PROOFS_OF_ACCEPTANCE))
def test_a_resend_after_any_proof_of_acceptance_is_blind_even_after_a_proof_of_absence(proof: str) -> None:
    accepted = PROOFS_OF_ACCEPTANCE[proof]
    for history in ([LOST, accepted, ABSENT, RESEND, RESENT], [LOST, ABSENT, accepted, RESEND, RESENT]):
        assert results(leg_with(history, mails=[RESENT["at"]]))["no_blind_retry"] is False, (proof, history)


def test_a_resend_while_a_mail_is_already_in_the_outbox_is_blind() -> None:
    already = "2026-12-03T10:00:01.200Z"  # the first attempt reached the mailbox; its answer was lost
    seen = leg_with([LOST, ABSENT, RESEND, RESENT], mails=[already, RESENT["at"]])
    assert results(seen)["no_blind_retry"] is False


def test_a_re_minted_reset_mail_is_a_resend_decided_at_its_entry() -> None:
    remint = {"at": "2026-12-03T10:05:02.000Z", "type": "reset_mail", "attempt": 2}
    assert results(leg_with([LOST, ABSENT, remint, RESENT], mails=[RESENT["at"]]))["no_blind_retry"] is True
    found = PROOFS_OF_ACCEPTANCE["a found lookup"]
    assert results(leg_with([LOST, ABSENT, found, remint, RESENT], mails=[]))["no_blind_retry"] is False


REFUSED = {
    "type": "https://sendledger.dev/problems/sms-country-not-allowed",
    "title": "Unprocessable Content",
    "status": 422,
    "detail": "SMS to TV numbers are refused by your rule (block TV)",
}
NOT_FOUND = {"type": "https://sendledger.dev/problems/not-found", "title": "Not Found", "status": 404, "detail": "x"}


@pytest.mark.parametrize(
    ("answers", "passed"),
    [
        ([(422, REFUSED), (404, NOT_FOUND), (200, [])], True),  # refused, nothing stored, nothing sent
        ([(202, {"message_id": "m-2", "state": "accepted"})], False),  # sent
        ([(422, REFUSED), (200, MESSAGE), (200, [])], False),  # refused, yet a message under its key
        ([(422, REFUSED), (404, NOT_FOUND), (200, [{"to": "+688901234"}])], False),  # in the outbox
        ([(422, {**REFUSED, "type": "x/validation-error"}), (404, NOT_FOUND), (200, [])], False),  # another 422
    ],
)
def test_the_sms_row_passes_only_on_a_refusal_that_left_nothing_behind(
    answers: list[tuple[int, Any]], passed: bool
) -> None:
    from sendledger_client import SendledgerClient
    from sendledger_client.conformance import SMS_REFUSED, LegPlan, refused_sms

    from tests.client.test_client import Scripted, Time, answer

    transport, time = Scripted([answer(status, body) for status, body in answers]), Time()
    client = SendledgerClient("http://127.0.0.1:8080", transport, clock=time.clock, sleep=time.sleep)
    row = refused_sms(client, "infrai", LegPlan(refused_sms_number="+688901234"))
    assert (row.condition, row.passed) == (SMS_REFUSED, passed), row.detail
    assert transport.sent[0].method == "POST"
