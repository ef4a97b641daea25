"""Secrets stay secret: reset tokens and recipient addresses (OWASP Forgot Password).

- a reset token exists only in the mail: never in logs, metrics, API answers, histories, or any
  table item (only its SHA-256 is stored);
- no raw recipient address (or phone number) is ever logged;
- tokens are compared in constant time (hmac.compare_digest, on hashes);
- guessing locks the reset after RESET_MAX_FAILED_ATTEMPTS wrong tokens.
"""

from __future__ import annotations

import hmac
import io
import logging
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from sendledger.adapters.dynamodb.keys import reset_pk
from sendledger.handlers import api as api_module
from sendledger.settings import Settings
from tests.integration.conftest import Ingestion, ses_record
from tests.reliability.faults import (
    Client,
    Fault,
    connect_timeout,
    dynamodb_error,
    mailed_tokens,
    message_id_of,
    read_timeout,
    s,
    scan,
)
from tests.support.fakes import ADMIN, CALLER

EMAILS = {
    "alert": "alice.secret@example.com",
    "reset": "bob.secret@example.com",
    "lockout": "carol.secret@example.com",
    "timeout": "dave.secret@example.com",
    "unreachable": "erin.secret@example.com",
    "reset-after-503": "frank.secret@example.com",
    "suppressed": "grace.secret@example.com",
    "reset-remint": "heidi.secret@example.com",
}
PHONE = "+12065550199"


@pytest.fixture
def logs() -> Iterator[io.StringIO]:
    """What the Powertools Logger writes to stdout (JSON lines), at DEBUG so nothing hides."""
    buffer = io.StringIO()
    service_logger = logging.getLogger(api_module.logger.service)
    handlers = [h for h in service_logger.handlers if isinstance(h, logging.StreamHandler)]
    assert handlers, "the Powertools Logger's stdout handler was not found"
    streams = [h.setStream(buffer) for h in handlers]
    level = service_logger.level
    service_logger.setLevel(logging.DEBUG)
    yield buffer
    service_logger.setLevel(level)
    for handler, stream in zip(handlers, streams, strict=True):
        handler.setStream(stream)


def alert(channel: str, to: str) -> dict[str, object]:
    return {"channel": channel, "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "s"}}


def test_tokens_and_addresses_never_leak(
    client, services, dynamo, ses, clock, ingestion, healthy_watermarks, logs, capsys
):
    # Given a day of traffic: sends on both channels, provider timeouts, resets mailed by the
    # poller (one re-minted after SES was unreachable), guesses, a DynamoDB outage, delivery
    # events, admin acts, and every history read back
    c: Client = client
    alice = c("POST", "/v1/messages", alert("email", EMAILS["alert"]), headers={"Idempotency-Key": "a1"})
    c("POST", "/v1/messages", alert("sms", PHONE), headers={"Idempotency-Key": "a2"})
    with ses.armed(Fault("SendEmail", "send", read_timeout)):
        c("POST", "/v1/messages", alert("email", EMAILS["timeout"]), headers={"Idempotency-Key": "a3"})
    with ses.armed(Fault("SendEmail", "send", connect_timeout, call=None)):
        c("POST", "/v1/messages", alert("email", EMAILS["unreachable"]), headers={"Idempotency-Key": "a4"})
    for account, email in [("acct-reset", EMAILS["reset"]), ("acct-lock", EMAILS["lockout"])]:
        c("POST", "/v1/password-resets", {"account_id": account, "email": email})
    with dynamo.armed(Fault("TransactWriteItems", "send", dynamodb_error("InternalServerError", 500), call=None)):
        unavailable = c("POST", "/v1/password-resets", {"account_id": "acct-503", "email": EMAILS["reset-after-503"]})
    c("POST", "/v1/password-resets", {"account_id": "acct-503", "email": EMAILS["reset-after-503"]})
    ingestion.poll()  # the poller mints and mails the three resets
    c("POST", "/v1/password-resets", {"account_id": "acct-remint", "email": EMAILS["reset-remint"]})
    with ses.armed(Fault("SendEmail", "send", connect_timeout, call=None)):
        ingestion.poll()  # SES unreachable: the reset mail is pending, its token never left
    clock.advance(120)
    ingestion.poll()  # re-minted under the same reset id, mailed
    ingestion.publish(ses_record("Bounce", alice.body["message_id"], EMAILS["alert"], clock.now()))
    ingestion.publish(ses_record("Complaint", alice.body["message_id"], EMAILS["alert"], clock.now()))
    ingestion.poll()
    for _ in range(services.settings.reset_max_failed_attempts):
        c("POST", "/v1/password-resets/consume", {"account_id": "acct-lock", "token": "A" * 43})
    [token] = mailed_tokens(EMAILS["reset"])
    c("POST", "/v1/password-resets/consume", {"account_id": "acct-reset", "token": token})
    recipient = quote(EMAILS["suppressed"], safe="")
    c("PUT", f"/v1/admin/suppressions/{recipient}", {"reason": "user asked"}, principal=ADMIN)
    c("DELETE", f"/v1/admin/suppressions/{recipient}", query={"reason": "confirmed"}, principal=ADMIN)
    c("POST", "/v1/messages", alert("email", EMAILS["suppressed"]), headers={"Idempotency-Key": "a5"})
    c("GET", f"/v1/suppressions/{quote(EMAILS['alert'], safe='')}")
    items = scan()
    message_ids = [message_id_of(i) for i in items if s(i, "sk") == "MSG"]
    histories = [c("GET", f"/v1/messages/{message_id}").body["history"] for message_id in message_ids]
    out = capsys.readouterr().out
    logged = logs.getvalue()
    tokens = [t for email in EMAILS.values() for t in mailed_tokens(email)]
    answers = str([(a.status, a.headers, a.body) for a in c.answers])

    # (the scenario really ran: four reset mails, a 503, logs and metrics were captured)
    assert len(tokens) == 4 and unavailable.status == 503 and len(message_ids) >= 9
    assert "provider outcome" in logged and "dependency unavailable" in logged and "reset token mismatch" in logged
    assert "delivery event" in logged and "poll cycle" in logged
    assert "MessagesAccepted" in out  # the api's EMF count per send outcome
    # Then no token anywhere but in the mail
    for token in tokens:
        for where, text in [
            ("logs", logged),
            ("stdout/metrics", out),
            ("API answers", answers),
            ("histories", str(histories)),
            ("table", str(items)),
        ]:
            assert token not in text, f"a reset token leaked into {where}"
    # And no recipient address in logs or metrics, in any spelling
    for address in [*EMAILS.values(), PHONE]:
        for spelling in {address, quote(address, safe=""), quote(address), address.split("@")[0]}:
            assert spelling not in logged, f"{spelling} logged"
            assert spelling not in out, f"{spelling} on stdout"
    # And histories carry the fingerprint, not the address
    assert all(EMAILS["alert"] not in str(h) and PHONE not in str(h) for h in histories)


def test_token_comparison_is_constant_time_on_hashes(client, ingestion, healthy_watermarks, monkeypatch):
    compared: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a, b):  # type: ignore[no-untyped-def]
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    client("POST", "/v1/password-resets", {"account_id": "acct-ct", "email": "ct@example.com"})
    ingestion.poll()
    [token] = mailed_tokens("ct@example.com")
    # When a wrong token is presented
    answer = client("POST", "/v1/password-resets/consume", {"account_id": "acct-ct", "token": "B" * 43})
    # Then it was compared with hmac.compare_digest, SHA-256 digest against digest, never the token
    assert answer.status == 400 and answer.body["type"].endswith("invalid-token")
    assert compared, "the presented token was not compared with hmac.compare_digest"
    for a, b in compared:
        assert len(a) == len(b) == 64 and token.encode() not in (a, b) and b"B" * 43 not in (a, b)


def _reset(client: Client, ingestion: Ingestion, account: str, email: str) -> str:
    assert client("POST", "/v1/password-resets", {"account_id": account, "email": email}).status == 202
    ingestion.poll()  # the poller mints and mails the token
    return mailed_tokens(email)[-1]


def _consume(client: Client, account: str, token: str) -> int:
    return client("POST", "/v1/password-resets/consume", {"account_id": account, "token": token}).status


def test_one_guess_short_of_the_limit_the_real_token_still_works(client, services, ingestion, healthy_watermarks):
    # Given a mailed token and RESET_MAX_FAILED_ATTEMPTS - 1 wrong guesses
    token = _reset(client, ingestion, "acct-g1", "g1@example.com")
    for _ in range(services.settings.reset_max_failed_attempts - 1):
        assert _consume(client, "acct-g1", "C" * 43) == 400
    # When the real token is presented; Then it still works
    assert _consume(client, "acct-g1", token) == 200


def test_guessing_locks_the_reset_and_a_new_request_recovers(client, services, clock, ingestion, healthy_watermarks):
    limit = services.settings.reset_max_failed_attempts
    token = _reset(client, ingestion, "acct-g2", "g2@example.com")
    # Given RESET_MAX_FAILED_ATTEMPTS wrong tokens
    for _ in range(limit):
        assert _consume(client, "acct-g2", "D" * 43) == 400
    # Then the reset is invalidated: the real token no longer works, with the same answer
    answer = client("POST", "/v1/password-resets/consume", {"account_id": "acct-g2", "token": token})
    assert answer.status == 400 and answer.body["type"].endswith("invalid-token")
    [record] = [i for i in scan() if s(i, "pk") == reset_pk(CALLER, "acct-g2")]
    assert s(record, "state") == "invalidated" and int(s(record, "failed_attempts")) == limit
    # When the user asks again (still inside the window), a fresh link works and the old never again
    clock.advance(5)
    fresh = _reset(client, ingestion, "acct-g2", "g2@example.com")
    assert fresh != token and _consume(client, "acct-g2", token) == 400
    assert _consume(client, "acct-g2", fresh) == 200


def test_the_limit_comes_from_RESET_MAX_FAILED_ATTEMPTS(client, services, ingestion, healthy_watermarks):
    services.settings = services.settings.replace(
        {"reset_max_failed_attempts": Settings.from_env({"RESET_MAX_FAILED_ATTEMPTS": "2"}).reset_max_failed_attempts}
    )
    # Given RESET_MAX_FAILED_ATTEMPTS=2 and two wrong guesses
    token = _reset(client, ingestion, "acct-g3", "g3@example.com")
    assert _consume(client, "acct-g3", "E" * 43) == 400
    assert _consume(client, "acct-g3", "E" * 43) == 400
    # Then the real token no longer works
    assert _consume(client, "acct-g3", token) == 400


# --- guessing under concurrency (a deterministic interleaving) ---------------------------------
def test_concurrent_wrong_guesses_all_count_towards_the_lockout(api, services, ingestion, healthy_watermarks):
    client = Client(api)
    client("POST", "/v1/password-resets", {"account_id": "acct-guess", "email": "guess@example.com"})
    ingestion.poll()
    [token] = mailed_tokens("guess@example.com")
    wrong = {"account_id": "acct-guess", "token": "F" * 43}
    real_get_reset = services.resets.get
    nested = threading.local()

    def a_second_guess_lands_meanwhile(owner: str, account_id: str) -> Any:
        record = real_get_reset(owner, account_id)
        if not getattr(nested, "active", False):
            nested.active = True
            client("POST", "/v1/password-resets/consume", wrong)  # between our read and our write
            nested.active = False
        return record

    services.resets.get = a_second_guess_lands_meanwhile
    # Given 6 wrong guesses (3 pairs racing each other), more than RESET_MAX_FAILED_ATTEMPTS (5)
    for _ in range(3):
        assert client("POST", "/v1/password-resets/consume", wrong).status == 400
    del services.resets.get
    assert [a.status for a in client.answers[1:]] == [400] * 6
    # Then the reset is locked: the real token no longer works
    assert client("POST", "/v1/password-resets/consume", {"account_id": "acct-guess", "token": token}).status == 400


def test_reset_ids_do_not_reveal_a_suppressed_address(client, ingestion, clock, healthy_watermarks):
    # Given one deliverable and one suppressed address
    suppressed = "sup.secret@example.com"
    client("PUT", f"/v1/admin/suppressions/{quote(suppressed, safe='')}", {"reason": "r"}, principal=ADMIN)
    answers = {}
    for account, email in [("acct-ok", "ok.secret@example.com"), ("acct-sup", suppressed)]:
        # When the user asks twice inside the reset window
        first = client("POST", "/v1/password-resets", {"account_id": account, "email": email})
        clock.advance(5)
        second = client("POST", "/v1/password-resets", {"account_id": account, "email": email})
        answers[account] = (first, second)
    ingestion.poll()
    # Then both addresses behave alike: same shape, and the same reset id twice
    for first, second in answers.values():
        assert first.status == second.status == 202 and set(first.body) == set(second.body)
    assert mailed_tokens("sup.secret@example.com") == []
    assert answers["acct-ok"][0].body["reset_id"] == answers["acct-ok"][1].body["reset_id"]
    assert answers["acct-sup"][0].body["reset_id"] == answers["acct-sup"][1].body["reset_id"]
