"""sendledger as deployed: the real `api` Lambda handler, called with API Gateway events."""

from __future__ import annotations

from typing import Any

from benchmarks.aws import PRINCIPAL, World, api_event, lambda_context, status_of
from benchmarks.counting import counting


def _handler() -> Any:
    from sendledger.handlers import api

    return api.lambda_handler


def ledger() -> Any:
    """The warm runtime's message store: what `counting` watches for a call through `ours`."""
    from sendledger import bootstrap

    return bootstrap.runtime().messages


def email_body(recipient: str) -> dict[str, Any]:
    return {
        "channel": "email",
        "to": recipient,
        "template": {"id": "alert", "version": "1"},
        "params": {"summary": "disk full on db-1"},
    }


def sms_body(number: str) -> dict[str, Any]:
    return {
        "channel": "sms",
        "to": number,
        "template": {"id": "alert", "version": "1"},
        "params": {"summary": "db-1 down"},
    }


def post(path: str, body: dict[str, Any], key: str | None = None) -> tuple[int, dict[str, Any], dict[str, Any]]:
    headers = {"Idempotency-Key": key} if key else {}
    response = _handler()(api_event("POST", path, body, headers=headers), lambda_context("sendledger-api"))
    status, payload = status_of(response)
    merged = {k.lower(): v[0] for k, v in (response.get("multiValueHeaders") or {}).items()}
    merged.update({k.lower(): v for k, v in (response.get("headers") or {}).items()})
    return status, merged, payload


def send_email(index: int, tag: str = "t") -> tuple[int, dict[str, Any]]:
    status, _, body = post("/v1/messages", email_body(f"ours-{tag}-{index}@example.com"), key=f"ours-{tag}-{index}")
    return status, body


def count_requests(world: World) -> dict[str, Any]:
    """Requests per operation, on the happy path (fresh recipient, healthy watermarks)."""
    world.refresh_watermarks()
    send_email(0, "warm")  # build services and clients outside the counted window
    figures: dict[str, Any] = {}
    with counting(ledger()) as log:
        status, headers, body = post("/v1/messages", email_body("count-send@example.com"), key="count-send")
        _check(status == 202 and body.get("state") == "accepted", "send", status, body)
        figures["send"] = _figure(log)
        log.reset()
        status, headers, body = post("/v1/messages", email_body("count-send@example.com"), key="count-send")
        _check(status == 202 and headers.get("idempotent-replayed") == "true", "replay", status, body)
        figures["replay"] = _figure(log)
        log.reset()
        status, headers, body = post("/v1/password-resets", {"account_id": "acct-bench", "email": "reset@example.com"})
        _check(status == 202, "reset", status, body)
        figures["reset"] = _figure(log)
        # The reset mail is the poller's half (token minted, hash swapped in, sent, outcome).
        record = _reset("acct-bench")
        log.reset()
        _mail_reset(record)
        figures["reset_mail"] = _figure(log)
        log.reset()
        status, headers, body = post("/v1/messages", sms_body("+12065550123"), key="count-sms")
        _check(status == 202 and body.get("state") == "accepted", "sms send", status, body)
        figures["sms_send"] = _figure(log)
    return figures


def _reset(account_id: str) -> Any:
    from sendledger import bootstrap
    from sendledger.domain.callers import caller_of

    return bootstrap.runtime().resets.get(caller_of(PRINCIPAL, {}).id, account_id)


def _mail_reset(record: Any) -> None:
    from sendledger import bootstrap

    bootstrap.runtime().reset_mailer.send(record, lambda: 30.0)


def _figure(log: Any) -> dict[str, Any]:
    wru = sum(r.capacity.get("write_request_units", 0.0) for r in log.requests)
    rru = sum(r.capacity.get("read_request_units", 0.0) for r in log.requests)
    prepare_only = sum(r.capacity.get("prepare_only_write_request_units", 0.0) for r in log.requests)
    return {
        "requests": log.total,
        "operations": log.summary(),
        "write_request_units": wru,
        "read_request_units": rru,
        "prepare_only_write_request_units": prepare_only,
    }


def _check(ok: bool, what: str, status: int, body: Any) -> None:
    if not ok:
        raise RuntimeError(f"sendledger {what} did not take the happy path: {status} {body}")
