"""`sendledger conformance`: the design note's provider test, the same for every provider leg.

Per leg: a password reset for a fresh account (the reset-window key: caller + account), whose
mail's send times out after the provider accepted it (locally the simulator's `+timeout-accepted`
label; against a real provider the stage injects the timeout after the request left,
SENDLEDGER_INJECT_TIMEOUTS), then, after a retry delay, the app's retry of the same request.
The leg passes only if every condition holds:

- one_accepted_message: the mailbox (the local outbox; deployed, the provider ids in the
  history) holds at most one accepted reset mail;
- one_active_token: the reset is active with exactly one valid token version;
- final_id_or_unresolved: the record holds the provider's message id, or says `unresolved`;
- no_blind_retry: every resend followed a proof of absence, and no proof of acceptance (an event,
  a found lookup, an accepted outcome, a mail already in the mailbox) came before it;
- no_second_valid_token: the retry gave the same reset, and no earlier token consumes;
- evidence_exportable: the evidence export returns the message as its view shows it.

A leg whose provider carries SMS, given a number the caller's SMS rules refuse
(`--refused-sms-number`), gains `sms_country_refused`: that SMS is answered 422
`sms-country-not-allowed` and leaves nothing behind (no message under its key, nothing in the
local outbox).

Then the leg's complaint scenario (complaint_leg.py): a mail the provider delivers and then
reports as a complaint must suppress its recipient (`complaint_after_delivery_suppresses`); its
record gives the leg's measured times (request -> accepted, accepted -> final event, complaint ->
suppressed), in the table and the JSON report.

Observing is HTTP (`observe`); judging is pure (`evaluate`), so each condition is tested to fail.
"""

from __future__ import annotations

import json
import re
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from sendledger_client import complaint_leg
from sendledger_client.client import SendledgerClient, View
from sendledger_client.errors import ProblemError

PROVIDERS = ("ses", "sendgrid", "mailgun", "infrai")
CONDITIONS = (
    "one_accepted_message",
    "one_active_token",
    "final_id_or_unresolved",
    "no_blind_retry",
    "no_second_valid_token",
    "evidence_exportable",
)
# A state the test waits past: the send is not attempted, or its outcome not known yet.
IN_FLIGHT = frozenset({"received", "pending", "sending", "unknown", "retry"})
TOKEN = re.compile(r"token=([A-Za-z0-9_-]+)")
FOUND_ACCEPTANCE = ("provider_lookup",)
RESEND_DECISIONS = ("resend", "reset_mail")  # the entry that starts another send of the message
SMS_LEGS = frozenset({"infrai"})  # the legs whose provider carries SMS too
SMS_REFUSED = "sms_country_refused"


@dataclass
class Row:
    condition: str
    passed: bool
    detail: str


@dataclass
class Observation:
    """What one leg saw: the two answers, the reset and its mail, the mailbox, the export."""

    provider: str
    reset_ids: list[str]  # the first request's and the retry's answers
    reset: View
    message: View
    mailbox: list[dict[str, Any]] | None  # the local outbox's entries for this reset; None deployed
    exported: list[View] | str  # the export's lines for the window, or why it failed
    consumed: list[int] = field(default_factory=list)  # each mailed token consumed, oldest first
    settled: bool = True  # False: the deadline passed with the mail still in flight


@dataclass
class Leg:
    provider: str
    rows: list[Row]
    evidence: dict[str, str | None]
    times: dict[str, float | None] = field(default_factory=dict)  # complaint_leg.TIMES, on the stack's clock

    @property
    def passed(self) -> bool:
        return all(row.passed for row in self.rows)

    def as_json(self) -> dict[str, Any]:
        return {"provider": self.provider, "passed": self.passed, "evidence": self.evidence,
                "conditions": [asdict(row) for row in self.rows], "times": self.times}  # fmt: skip


# --- judging ---------------------------------------------------------------------------------
def evaluate(seen: Observation) -> list[Row]:
    history = list(seen.message.get("history") or [])
    return [
        _one_accepted_message(seen, history),
        _one_active_token(seen),
        _final_id_or_unresolved(seen),
        _no_blind_retry(seen, history),
        _no_second_valid_token(seen),
        _evidence_exportable(seen, history),
    ]


def _one_accepted_message(seen: Observation, history: list[dict[str, Any]]) -> Row:
    if seen.mailbox is not None:
        count = len(seen.mailbox)
        return Row("one_accepted_message", count <= 1, f"{count} reset mail(s) in the mailbox")
    ids = {entry["provider_message_id"] for entry in history if entry.get("provider_message_id")}
    return Row("one_accepted_message", len(ids) <= 1, f"{len(ids)} provider message id(s) in the history")


def _one_active_token(seen: Observation) -> Row:
    versions = [v for v in seen.reset.get("token_versions") or [] if not v.get("invalidated_at")]
    state = seen.reset.get("state")
    passed = state == "active" and len(versions) == 1
    return Row("one_active_token", passed, f"reset {state}, {len(versions)} valid token version(s)")


def _final_id_or_unresolved(seen: Observation) -> Row:
    state, provider_id = seen.message.get("state"), seen.message.get("provider_message_id")
    if state == "unresolved":
        return Row("final_id_or_unresolved", True, "explicitly unresolved")
    passed = bool(provider_id) and state not in IN_FLIGHT and seen.settled
    return Row("final_id_or_unresolved", passed, f"{state}, provider message id {provider_id or 'none'}")


def _no_blind_retry(seen: Observation, history: list[dict[str, Any]]) -> Row:
    """A resend is blind unless a proof of absence came before it and no proof of acceptance
    did: any proof of acceptance forbids a resend, whatever absence seemed proven around it."""
    outcomes = [index for index, entry in enumerate(history) if entry.get("type") == "provider_outcome"]
    blind = sum(_blind(seen, history, _decided_at(history, index)) for index in outcomes[1:])
    return Row("no_blind_retry", blind == 0, f"{max(len(outcomes) - 1, 0)} resend(s), {blind} blind")


def _decided_at(history: list[dict[str, Any]], outcome: int) -> int:
    """Where the resend whose outcome is at `outcome` was decided: its own resend (or re-mint)
    entry, else the outcome itself. The history is in the ledger's order."""
    for index in range(outcome - 1, -1, -1):
        entry = history[index]
        if entry.get("type") == "provider_outcome":
            break
        if entry.get("type") in RESEND_DECISIONS:
            return index
    return outcome


def _blind(seen: Observation, history: list[dict[str, Any]], decided: int) -> bool:
    before = history[:decided]
    proven_absent = any(entry.get("type") == "absence_proven" for entry in before)
    proven_accepted = any(_proves_acceptance(entry) for entry in before)
    decided_at = str(history[decided].get("at", ""))
    mailed_before = any(str(mail.get("sent_at", "")) < decided_at for mail in seen.mailbox or [])
    return not proven_absent or proven_accepted or mailed_before


def _proves_acceptance(entry: dict[str, Any]) -> bool:
    kind = str(entry.get("type", ""))
    if kind.startswith("event:"):
        return True
    if kind in FOUND_ACCEPTANCE:
        return entry.get("lookup") == "found" or entry.get("decision") == "accepted"
    return kind == "provider_outcome" and entry.get("provider_result") == "accepted"


def _no_second_valid_token(seen: Observation) -> Row:
    same_reset = len(set(seen.reset_ids)) == 1
    if seen.mailbox is not None:
        earlier_consumed = [status for status in seen.consumed[:-1] if status == 200]
        passed = same_reset and not earlier_consumed and seen.consumed.count(200) <= 1
        detail = f"{'same' if same_reset else 'another'} reset on retry; tokens consumed: {seen.consumed}"
        return Row("no_second_valid_token", passed, detail)
    valid = [v for v in seen.reset.get("token_versions") or [] if not v.get("invalidated_at")]
    passed = same_reset and len(valid) <= 1
    return Row("no_second_valid_token", passed, f"{'same' if same_reset else 'another'} reset on retry")


def _evidence_exportable(seen: Observation, history: list[dict[str, Any]]) -> Row:
    if isinstance(seen.exported, str):
        return Row("evidence_exportable", False, f"export failed: {seen.exported}")
    found = [line for line in seen.exported if line.get("message_id") == seen.message.get("message_id")]
    if len(found) != 1:
        return Row("evidence_exportable", False, f"{len(found)} export line(s) for the message")
    line = found[0]
    same = all(line.get(name) == seen.message.get(name) for name in ("state", "provider", "provider_message_id"))
    complete = len(line.get("history") or []) == len(history)
    return Row("evidence_exportable", same and complete, f"exported with {len(line.get('history') or [])} entries")


# --- observing -------------------------------------------------------------------------------
@dataclass
class LegPlan:
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:10])
    to: str | None = None  # a real mailbox against a real provider; locally a labelled example.com address
    refused_sms_number: str | None = None  # a number the caller's SMS rules refuse (None: no SMS row)
    retry_delay_seconds: float = 2.0
    deadline_seconds: float = 90.0
    local: bool = True  # the stack answers /local/poll and /local/outbox
    wait_seconds: float = 0.25  # between two looks at the message (deployed: the poller's schedule)
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic


def run_leg(client: SendledgerClient, provider: str, plan: LegPlan) -> Leg:
    seen = observe(client, provider, plan)
    message_id = seen.message.get("message_id")
    evidence = {
        "reset_id": seen.reset_ids[0] if seen.reset_ids else None,
        "message_id": str(message_id) if message_id else None,
        "provider_message_id": seen.message.get("provider_message_id"),
    }
    complaint = complaint_leg.observe(client, provider, plan)
    passed, detail = complaint_leg.judge(complaint)
    evidence["complaint_message_id"] = complaint.message.get("message_id")
    rows = [*evaluate(seen), Row(complaint_leg.CONDITION, passed, detail)]
    if provider in SMS_LEGS and plan.refused_sms_number:
        rows.append(refused_sms(client, provider, plan))
    return Leg(provider, rows, evidence, complaint_leg.measured(complaint))


def refused_sms(client: SendledgerClient, provider: str, plan: LegPlan) -> Row:
    """An SMS to a country the caller's rules refuse: 422 naming the rule, and nothing stored or sent."""
    assert plan.refused_sms_number is not None
    key = f"conformance-{provider}-{plan.run_id}-refused-sms"
    params = {"summary": f"conformance {plan.run_id}"}
    try:
        view = client.send("sms", plan.refused_sms_number, "alert", params=params, idempotency_key=key,
                           provider=provider, wait=False)  # fmt: skip
    except ProblemError as problem:
        refused = problem.status == 422 and problem.type.endswith("/sms-country-not-allowed")
        stored = _stored(client, key)
        sent = [e for e in client.outbox() if e.get("to") == plan.refused_sms_number] if plan.local else []
        detail = f"{problem.status} {problem.type.rpartition('/')[2]}: {problem.detail}"
        if stored or sent:
            detail += f"; but {'a message was stored' if stored else ''}{' and ' if stored and sent else ''}"
            detail += "an SMS reached the outbox" if sent else ""
        return Row(SMS_REFUSED, refused and not stored and not sent, detail)
    return Row(SMS_REFUSED, False, f"sent: {view.get('state')} (message {view.get('message_id')})")


def _stored(client: SendledgerClient, key: str) -> bool:
    try:
        client.find(idempotency_key=key)
    except ProblemError as problem:
        if problem.status == 404:
            return False
        raise
    return True


def observe(client: SendledgerClient, provider: str, plan: LegPlan) -> Observation:
    account = f"conformance-{provider}-{plan.run_id}"
    to = plan.to or f"conformance-{provider}-{plan.run_id}+timeout-accepted@example.com"
    since = datetime.now(UTC) - timedelta(seconds=5)
    started = plan.clock()
    first = client.request_reset(account, to, provider=provider)
    reset_id = str(first["reset_id"])
    _until(client, plan, started, reset_id, lambda message: message.get("state") not in ("received", "pending"))
    plan.sleep(plan.retry_delay_seconds)  # the app's retry delay, then its retry of the same request
    retried = client.request_reset(account, to, provider=provider)
    settled = _until(client, plan, started, reset_id, _settled)
    reset = client.reset(reset_id)
    message = (reset.get("messages") or [{}])[0]
    mailbox = _mailbox(client, reset) if plan.local else None
    until = datetime.now(UTC) + timedelta(seconds=5)
    try:
        exported: list[View] | str = list(client.export(_iso(since), _iso(until)))
    except ProblemError as problem:
        exported = f"{problem.status} {problem.title}"
    seen = Observation(provider, [reset_id, str(retried["reset_id"])], reset, message, mailbox, exported,
                       settled=settled)  # fmt: skip
    if mailbox is not None:
        tokens = [match.group(1) for mail in mailbox if (match := TOKEN.search(str(mail.get("text", ""))))]
        seen.consumed = [client.consume_reset(account, token) for token in tokens]  # oldest first
    return seen


def _settled(message: View) -> bool:
    return message.get("state") not in IN_FLIGHT and (
        bool(message.get("provider_message_id")) or message.get("state") != "accepted"
    )


def _until(
    client: SendledgerClient, plan: LegPlan, started: float, reset_id: str, done: Callable[[View], bool]
) -> bool:
    """Poll (locally) and look at the reset's mail until `done`; False when the deadline passed."""
    while plan.clock() - started < plan.deadline_seconds:
        if plan.local:
            client.poll()
        message = (client.reset(reset_id).get("messages") or [{}])[0]
        if done(message):
            return True
        plan.sleep(plan.wait_seconds)
    return False


def _mailbox(client: SendledgerClient, reset: View) -> list[dict[str, Any]]:
    ids = {message.get("message_id") for message in reset.get("messages") or []}
    entries = [entry for entry in client.outbox() if entry.get("message_id") in ids]
    return sorted(entries, key=lambda entry: str(entry.get("sent_at", "")))


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- the command (registered in cli.py) -----------------------------------------------------
@click.command()
@click.option("--provider", "providers", type=click.Choice([*PROVIDERS, "all"]), default="all", show_default=True,
              help="the provider leg to run (all: every leg, one after the other)")  # fmt: skip
@click.option("--json", "json_path", type=click.Path(dir_okay=False, writable=True), default=None,
              help="also write the report as JSON to this file")  # fmt: skip
@click.option("--to", default=None, help="a real mailbox for the reset mails (default: the local simulator's)")
@click.option("--retry-delay", default=2.0, show_default=True, help="seconds before the app's retry of the request")
@click.option("--deadline", "deadline_seconds", default=90.0, show_default=True, help="seconds a leg may take")
@click.option("--deployed", is_flag=True, help="a deployed stack: no /local routes, the poller runs on its schedule")
@click.option("--refused-sms-number", default=None,
              help="an E.164 number your SMS rules refuse: each SMS leg checks it is refused and not sent")  # fmt: skip
@click.pass_obj
def conformance(
    obj: Any,
    providers: str,
    json_path: str | None,
    to: str | None,
    retry_delay: float,
    deadline_seconds: float,
    deployed: bool,
    refused_sms_number: str | None,
) -> None:
    """The design note's test per provider leg: a reset, a timeout after the send, a retry."""
    client: SendledgerClient = obj.client
    plan = LegPlan(to=to, retry_delay_seconds=retry_delay, deadline_seconds=deadline_seconds, local=not deployed,
                   refused_sms_number=refused_sms_number)  # fmt: skip
    if deployed:
        plan.wait_seconds = 15.0
    legs = [run_leg(client, provider, plan) for provider in (PROVIDERS if providers == "all" else (providers,))]
    report = {"run_id": plan.run_id, "endpoint": client.endpoint, "passed": all(leg.passed for leg in legs),
              "legs": [leg.as_json() for leg in legs]}  # fmt: skip
    if json_path:
        with open(json_path, "w", encoding="utf-8") as out:
            json.dump(report, out, indent=2)
    if getattr(obj, "as_json", False):
        click.echo(json.dumps(report, indent=2))
    else:
        console: Console = getattr(obj, "out", None) or Console()
        console.print(report_table(legs))
    if not report["passed"]:
        sys.exit(1)


def report_table(legs: list[Leg]) -> Table:
    table = Table(title="sendledger conformance")
    for column in ("provider", "condition", "result", "detail", "evidence", "measured (stack clock)"):
        table.add_column(column, overflow="fold")
    for leg in legs:
        ids = " ".join(f"{name}={value}" for name, value in leg.evidence.items() if value)
        times = complaint_leg.describe(leg.times)
        for index, row in enumerate(leg.rows):
            result = "[green]pass[/]" if row.passed else "[bold red]FAIL[/]"
            measured = times[index] if index < len(times) else ""
            table.add_row(
                leg.provider if index == 0 else "", row.condition, result, row.detail, ids if index == 0 else "",
                measured,
            )  # fmt: skip
        table.add_section()
    return table
