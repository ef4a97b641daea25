"""Fault injection and invariant checks shared by the reliability tests.

Faults are botocore event hooks on the real clients (the ledger's DynamoDB client, the SESv2
client of the SES adapter), so the handler, use cases and adapters run unchanged. Under
``mock_aws`` moto's own stubber is itself a ``before-send`` handler that runs after ours and
would still execute a request we answered with an error; a faulted request is therefore
pointed at a host no moto URL pattern matches (the same trick local/simulator/hooks.py uses), so
"the service answered an error" really means "nothing was applied".
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from io import BytesIO
from typing import Any

from botocore.awsrequest import AWSResponse
from botocore.exceptions import ClientError, ConnectTimeoutError, ReadTimeoutError
from moto.core import DEFAULT_ACCOUNT_ID
from moto.dynamodb.models import dynamodb_backends

from sendledger.adapters import aws as aws_clients
from sendledger.adapters.dynamodb.keys import HISTORY_PREFIX, reset_pk
from sendledger.domain import ids, tokens
from sendledger.domain.clock import iso
from sendledger.domain.messages import HistoryEntry, MessageState
from sendledger.providers.ses import MESSAGE_ID_TAG as SES_MESSAGE_ID_TAG
from tests.conftest import TABLE
from tests.reliability import lifecycle_oracle
from tests.reliability.status_events import StatusEventWatch
from tests.support.fakes import CALLER
from tests.support.outbox import sent_emails

PROBLEM_JSON = "application/problem+json"
TOKEN_IN_LINK = re.compile(r"reset\?token=([A-Za-z0-9_-]+)")
NOWHERE = "http://sendledger-fault.invalid/answered-locally"


# Figures the report prints (tests/reliability/report.py): measured in the run, per process.
FIGURES: Counter[str] = Counter()


class InjectedCrash(RuntimeError):
    """The Lambda dies here (an unhandled exception or a timeout kill): API Gateway says 502."""


# --- the client's view ---------------------------------------------------------------------
@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: Any
    crashed: str | None = None

    @property
    def retry_after(self) -> int | None:
        value = self.headers.get("retry-after")
        return int(value) if value is not None else None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def is_problem(self) -> bool:
        return self.headers.get("content-type") == PROBLEM_JSON


class Client:
    """The app calling the API: a crashed invocation is a 502 from API Gateway, not a test error."""

    def __init__(self, api: Callable[..., tuple[int, dict[str, str], Any]]) -> None:
        self.api = api
        self.answers: list[Answer] = []

    def __call__(self, method: str, path: str, body: Any = None, **kwargs: Any) -> Answer:
        try:
            status, headers, parsed = self.api(method, path, body, **kwargs)
            answer = Answer(status, headers, parsed)
        except Exception as exc:  # the invocation died: the caller only sees a gateway error
            answer = Answer(502, {}, None, crashed=type(exc).__name__)
        self.answers.append(answer)
        return answer


# --- wire-level responses ------------------------------------------------------------------
class _RawBody(BytesIO):
    def stream(self, **_: Any) -> Iterator[bytes]:
        contents = self.read()
        while contents:
            yield contents
            contents = self.read()


def answer_locally(request: Any, status: int, headers: dict[str, str], body: dict[str, Any]) -> AWSResponse:
    url = request.url
    request.url = NOWHERE  # moto's stubber (a later before-send handler) now ignores it
    payload = json.dumps(body).encode()
    return AWSResponse(url, status, {**headers, "Content-Length": str(len(payload))}, _RawBody(payload))


def dynamodb_error(code: str, status: int = 400, reasons: list[str] | None = None) -> Callable[[Any], AWSResponse]:
    """A DynamoDB JSON-protocol error answer; ``reasons`` fills CancellationReasons in order."""

    def make(request: Any) -> AWSResponse:
        body: dict[str, Any] = {"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": f"injected {code}"}
        if code == "TransactionCanceledException":
            items = json.loads(request.body or b"{}").get("TransactItems", [])
            codes = (reasons or ["TransactionConflict"]) + ["None"] * len(items)
            body["CancellationReasons"] = [{"Code": c} for c in codes[: len(items)]]
            body["Message"] = f"Transaction cancelled, please refer cancellation reasons [{', '.join(codes)}]"
        headers = {"x-amzn-RequestId": f"fault-{uuid.uuid4()}", "Content-Type": "application/x-amz-json-1.0"}
        return answer_locally(request, status, headers, body)

    return make


def ses_error(code: str, status: int) -> Callable[[Any], AWSResponse]:
    def make(request: Any) -> AWSResponse:
        headers = {
            "x-amzn-ErrorType": code,
            "x-amzn-RequestId": f"fault-{uuid.uuid4()}",
            "Content-Type": "application/json",
        }
        return answer_locally(request, status, headers, {"message": f"injected {code}"})

    return make


def read_timeout(request: Any = None, **_: Any) -> None:
    raise ReadTimeoutError(endpoint_url=getattr(request, "url", "https://injected"))


def connect_timeout(request: Any = None, **_: Any) -> None:
    raise ConnectTimeoutError(endpoint_url=getattr(request, "url", "https://injected"))


def internal_error(**_: Any) -> None:
    """A 500 whose request was nevertheless applied (DynamoDB documents 500s as ambiguous)."""
    response = {"Error": {"Code": "InternalServerError", "Message": "injected"}, "ResponseMetadata": {}}
    response["ResponseMetadata"] = {"HTTPStatusCode": 500, "HTTPHeaders": {}}
    raise ClientError(response, "TransactWriteItems")  # type: ignore[arg-type]


def crash(**_: Any) -> None:
    raise InjectedCrash("injected crash")


# --- hooks --------------------------------------------------------------------------------
@dataclass
class Fault:
    """One injected fault.

    ``stage``: ``send`` runs on every HTTP attempt of the call, before it reaches the service
    (an exception or a returned error answer: nothing is applied); ``after`` runs once the
    service applied the call and answered (the answer is lost on the way back).
    ``call``: which call of ``operation`` (1-based, counted while armed); None = every call.
    ``attempts``: how many HTTP attempts of that call fail (None = all of them).
    ``key_prefix``: only calls on an item whose pk starts with it (then ``call`` counts those).
    """

    operation: str
    stage: str
    action: Callable[..., Any]
    call: int | None = 1
    attempts: int | None = None
    fired: int = 0
    key_prefix: str | None = None


class Arming:
    """What every fault hook shares: the faults armed for one invocation, the calls counted since."""

    faults: list[Fault]
    calls: Counter[str]

    def arm(self, *faults: Fault) -> None:
        self.faults = list(faults)
        self.calls.clear()

    def disarm(self) -> None:
        self.faults = []

    @contextmanager
    def armed(self, *faults: Fault) -> Iterator[None]:
        self.arm(*faults)
        try:
            yield
        finally:
            self.disarm()


@dataclass
class Hooks(Arming):
    """Faults on a set of botocore event emitters (one service); calls are counted per operation."""

    service: str
    emitters: list[Any]
    faults: list[Fault] = field(default_factory=list)
    calls: Counter[str] = field(default_factory=Counter)
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    _current: threading.local = field(default_factory=threading.local)

    def __post_init__(self) -> None:
        unique = {id(e): e for e in self.emitters}
        self.emitters = list(unique.values())
        for emitter in self.emitters:
            emitter.register(f"before-call.{self.service}", self._before_call)
            emitter.register(f"before-parameter-build.{self.service}", self._record)
            emitter.register(f"before-send.{self.service}", self._before_send)
            emitter.register(f"after-call.{self.service}", self._after_call)

    def close(self) -> None:
        for emitter in self.emitters:
            emitter.unregister(f"before-call.{self.service}", self._before_call)
            emitter.unregister(f"before-parameter-build.{self.service}", self._record)
            emitter.unregister(f"before-send.{self.service}", self._before_send)
            emitter.unregister(f"after-call.{self.service}", self._after_call)

    def _matching(self, operation: str, stage: str) -> list[Fault]:
        numbers: dict[str | None, int] = getattr(self._current, "numbers", {})
        return [
            f
            for f in self.faults
            if f.operation == operation
            and f.stage == stage
            and f.key_prefix in numbers
            and (f.call is None or f.call == numbers[f.key_prefix])
        ]

    def _record(self, model: Any, params: Any = None, **_: Any) -> None:
        """The API parameters of every call (what a ClientRequestToken vouches for)."""
        self.requests.append((model.name, json.loads(json.dumps(params or {}, default=str))))
        key = (params or {}).get("Key") or (params or {}).get("Item") or {}
        self._current.pk = str((key.get("pk") or {}).get("S", ""))

    def _before_call(self, model: Any, **_: Any) -> None:
        self.calls[model.name] += 1
        numbers: dict[str | None, int] = {None: self.calls[model.name]}
        pk = getattr(self._current, "pk", "")
        for prefix in {f.key_prefix for f in self.faults if f.key_prefix and pk.startswith(f.key_prefix)}:
            self.calls[f"{model.name}:{prefix}"] += 1
            numbers[prefix] = self.calls[f"{model.name}:{prefix}"]
        self._current.numbers = numbers

    def _before_send(self, request: Any, event_name: str, **_: Any) -> Any:
        operation = event_name.rsplit(".", 1)[-1]
        for fault in self._matching(operation, "send"):
            if fault.attempts is not None and fault.fired >= fault.attempts:
                continue
            fault.fired += 1
            result = fault.action(request=request)
            if result is not None:
                return result
        return None

    def _after_call(self, event_name: str, **_: Any) -> None:
        operation = event_name.rsplit(".", 1)[-1]
        for fault in self._matching(operation, "after"):
            fault.fired += 1
            fault.action()


# --- what the ledger and the provider hold ---------------------------------------------------
def scan() -> list[dict[str, Any]]:
    """Every item of the table, read from moto's backend (the ground truth, like sent_emails()).

    Same attribute-value shape as a Scan answer, without moto's response serialization, which
    made whole-ledger checks after every step the slowest part of the suite.
    """
    table = dynamodb_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].get_table(TABLE)
    return [json.loads(json.dumps(item.to_json()["Attributes"])) for item in table.all_items()]


def ddb() -> Any:
    """The DynamoDB client for direct reads in tests (rebuilt with each moto world by its fixtures)."""
    return aws_clients.client("dynamodb")


def message_id_of(item: dict[str, Any]) -> str:
    """The message a message item, its receipt or timer belongs to (their key holds it)."""
    return str(s(item, "pk")).removeprefix("MSG#")


def recipient_key_of(message: dict[str, Any]) -> str:
    """A message item's recipient key, derived as the ledger derives it."""
    from sendledger.adapters.dynamodb.message_items import message_from

    return message_from(message).recipient_key


def recipient_of(message_id: str) -> str:
    """The address a message was sent to, decoded as the ledger decodes its item.

    A provider event the model publishes names it: read through message_from so that a change of
    the item's encoding cannot silently turn it into None (an event without a recipient is
    unreadable to SendGrid's parser and suppresses nobody under SES and Mailgun).
    """
    from sendledger.adapters.dynamodb.message_items import message_from

    item = ddb().get_item(
        TableName=TABLE, Key={"pk": {"S": f"MSG#{message_id}"}, "sk": {"S": "MSG"}}, ConsistentRead=True
    )["Item"]
    return message_from(item).to


def s(item: dict[str, Any], name: str) -> Any:
    value = item.get(name)
    if value is None:
        return None
    return next(iter(value.values()))


def merged_state(items: list[dict[str, Any]], message_id: str) -> str:
    """A message's state as its readers see it: the message item with its receipts folded in."""
    from sendledger.adapters.dynamodb import receipts
    from sendledger.adapters.dynamodb.message_items import message_from

    [item] = [i for i in items if s(i, "pk") == f"MSG#{message_id}" and s(i, "sk") == "MSG"]
    message = message_from(item)
    for receipt in items:
        own = s(receipt, "pk") == f"MSG#{message_id}" and s(receipt, "sk") == "RCPT"
        sms = s(receipt, "sk") == "PMID" and s(receipt, "message_id") == message_id
        if own or sms:
            receipts.fold(message, receipt)
    return message.state.value


def due_kind_of(item: dict[str, Any]) -> str | None:
    """The due-work kind of an item (the index key is `<kind>#<shard>`)."""
    value = s(item, "due_kind")
    return str(value).split("#")[0] if value else None


def items_with(items: list[dict[str, Any]], prefix: str, sk: str | None = None) -> list[dict[str, Any]]:
    return [i for i in items if s(i, "pk").startswith(prefix) and (sk is None or s(i, "sk") == sk)]


# The email provider under test, when a shared world runs one (tests/reliability/provider_legs.py).
GROUND_TRUTH: list[Callable[[str], list[Any]]] = []


def emails_to(address: str) -> list[Any]:
    """What the provider accepted for this address (the ground truth: moto's SES backend, or the
    outbox of the provider a shared world runs); each has the mail's text as `body`."""
    if GROUND_TRUTH:
        return GROUND_TRUTH[-1](address)
    return [m for m in sent_emails() if address in (m.destinations.get("ToAddresses") or [])]


def mailed_tokens(address: str) -> list[str]:
    return [match.group(1) for m in emails_to(address) if (match := TOKEN_IN_LINK.search(m.body))]


# --- invariants ---------------------------------------------------------------------------
DEFINED_STATES = {state.value for state in MessageState}
# A message that is not settled must be findable by the worker/poller (its due-work entry).
DUE_WORK = {"sending": "inflight", "unknown": "unknown", "pending": "pending", "retry": "pending"}
# What a keyed message carries as its key's idempotency record.
IDEMPOTENCY_RECORD = ("idem_fingerprint", "idem_expires_at")
# History entries that open a send attempt: the decision a provider call acts on.
SEND_DECISIONS = {"intent", "reset_mail", "resend"}
# What the figures count when the watch first sees one (how often the hard paths were reached).
HARD_PATHS = {
    "lease_expired": "reached_lease_expiries",
    "absence_proven": "reached_proven_absences",
    "resend": "reached_resends",
    "unresolved": "reached_unresolved",
}


def history_entries(items: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Every history entry, raw, by (owner pk, attribute): entries are `h:` attributes."""
    return {
        (s(item, "pk"), name): value
        for item in items
        for name, value in item.items()
        if name.startswith(HISTORY_PREFIX)
    }


def history_of(items: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """History entries by owner (message, SMS receipt, recipient), oldest first, as items of
    attribute values ({"type": {"S": ...}, "at": ..., "evidence": JSON})."""
    from sendledger.adapters.dynamodb import history

    owners: dict[str, list[tuple[str, HistoryEntry]]] = {}
    for item in items:
        owners.setdefault(s(item, "pk"), []).extend(history.entries_of(item))
    found: dict[str, list[dict[str, Any]]] = {}
    for owner, pairs in owners.items():
        if not pairs:
            continue
        found[owner] = [
            {
                "at": {"S": iso(entry.at)},
                "type": {"S": entry.type.value},
                "evidence": {"S": json.dumps(entry.evidence)},
                **({"state": {"S": entry.state.value}} if entry.state else {}),
            }
            for entry in history.in_order(pairs)
        ]
    return found


def _evidence(entry: dict[str, Any]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(s(entry, "evidence") or "{}")
    return loaded


@dataclass(frozen=True)
class ProviderCall:
    """One call that hands a message to SES or SNS, with what the ledger held at that moment."""

    message_id: str | None
    recipient: str
    decided_at: str | None
    decided_version: int | None
    suppressed: bool
    suppressed_since: str | None
    suppression_version: int


class ProviderCalls:
    """Sees every SESv2 SendEmail and SNS Publish the product makes (botocore session hooks).

    At the moment of the call it reads, from moto's backend, the message's last send decision
    and the recipient's suppression item; the current LedgerWatch judges them at its next check.
    Only clients created after ``install`` are seen (botocore copies session handlers into new
    clients), which is why the shared world installs it before building its services.
    """

    EVENTS = ("before-parameter-build.sesv2.SendEmail", "before-parameter-build.sns.Publish")

    def __init__(self, watch: Callable[[], LedgerWatch]) -> None:
        self.watch = watch
        self.session: Any = None

    def install(self, session: Any) -> None:
        self.session = session
        for event in self.EVENTS:
            session.events.register(event, self._on_call)

    def uninstall(self) -> None:
        for event in self.EVENTS:
            self.session.events.unregister(event, self._on_call)

    def _on_call(self, params: dict[str, Any], **_: Any) -> None:
        tags = {t.get("Name"): t.get("Value") for t in params.get("EmailTags") or []}
        recipients = (params.get("Destination") or {}).get("ToAddresses") or [params.get("PhoneNumber")]
        self.watch().provider_calls.append(ledger_at_call(tags.get(SES_MESSAGE_ID_TAG), str(recipients[0])))


def ledger_at_call(message_id: str | None, recipient: str) -> ProviderCall:
    items = scan()
    messages = [
        m
        for m in items_with(items, "MSG#", "MSG")
        if (
            message_id_of(m) == message_id
            if message_id
            else s(m, "recipient") == recipient and s(m, "state") == "sending"
        )
    ]
    decided_at = decided_version = None
    recipient_key = recipient_key_of(messages[0]) if messages else None
    if messages:
        entries = history_of(items).get(s(messages[0], "pk"), [])
        decisions = [e for e in entries if s(e, "type") in SEND_DECISIONS]
        if decisions:
            decided_at = s(decisions[-1], "at")
            version = _evidence(decisions[-1]).get("suppression_version")
            decided_version = int(version) if version is not None else None
    [state] = items_with(items, f"SUP#{recipient_key}", "STATE") or [{}]
    return ProviderCall(
        message_id=message_id_of(messages[0]) if messages else message_id,
        recipient=recipient_key or recipient,
        decided_at=decided_at,
        decided_version=decided_version,
        suppressed=bool(s(state, "suppressed")),
        suppressed_since=s(state, "since"),
        suppression_version=int(s(state, "version") or 0),
    )


class LedgerWatch:
    """Observes the whole table between requests and checks the ledger's invariants: no provider
    call to a recipient whose suppression was in force, each source event applied at most once,
    states that only move forward, append-only history, no intent lost, one reset per account.

    One watch per run: what it saw before is what later observations are held against
    (append-only history, states that only move forward, suppressions already in force).
    """

    total_observations = 0  # across every watch of the process (reported in FIGURES too)

    def __init__(self) -> None:
        self.history: dict[tuple[str, str], dict[str, Any]] = {}
        self.states: dict[str, str] = {}
        self.suppressed_versions: dict[str, int] = {}  # recipient key → version seen in force at a check
        self.provider_calls: list[ProviderCall] = []
        self.judged_calls = 0
        self.observations = 0
        self.status_events = StatusEventWatch()

    def check(self) -> list[dict[str, Any]]:
        items = scan()
        self.observations += 1
        LedgerWatch.total_observations += 1
        FIGURES["invariant_checks"] += 1
        self._append_only(items)
        self._no_send_to_suppressed()
        self._events_once(items)
        messages = {s(i, "pk"): i for i in items_with(items, "MSG#", "MSG")}
        self._forward_only(messages)
        self._intents_kept(items, messages)
        self._one_reset_per_account(items, messages)
        self.status_events.check(
            items, {message_id_of(m): merged_state(items, message_id_of(m)) for m in messages.values()}
        )
        self.suppressed_versions = {
            s(i, "pk").removeprefix("SUP#"): int(s(i, "version"))
            for i in items_with(items, "SUP#", "STATE")
            if s(i, "suppressed")
        }
        return items

    def _append_only(self, items: list[dict[str, Any]]) -> None:
        """History is append-only: nothing seen before changed or disappeared."""
        current = history_entries(items)
        for key, item in self.history.items():
            assert key in current, f"history entry disappeared: {key}"
            assert current[key] == item, f"history entry changed: {key}"
        from sendledger.adapters.dynamodb import history

        for key in current.keys() - self.history.keys():
            body = json.loads(current[key]["S"])
            kind = body[history.TYPE]
            if kind in HARD_PATHS:
                FIGURES[HARD_PATHS[kind]] += 1
            if kind.startswith("event:") and "would_be" in body.get(history.EVIDENCE, {}):
                FIGURES["reached_regressions_refused"] += 1
        self.history = current

    def _no_send_to_suppressed(self) -> None:
        """No provider call for a recipient whose suppression was in force when the send was decided.

        In force before the decision: suppressed since an earlier instant, or (same instant of the
        fake clock) already seen suppressed at this version by the previous check, which came
        before the step that decided.
        """
        for call in self.provider_calls[self.judged_calls :]:
            FIGURES["provider_calls_judged"] += 1
            if not call.suppressed:
                continue
            assert call.decided_at is not None, f"provider call without a send decision in history: {call}"
            earlier = call.suppressed_since is not None and call.suppressed_since < call.decided_at
            seen_before = self.suppressed_versions.get(call.recipient) == call.suppression_version
            stale = call.decided_version is None or call.decided_version < call.suppression_version
            assert not earlier and not (seen_before and stale), f"sent to a suppressed recipient: {call}"
        self.judged_calls = len(self.provider_calls)

    def _events_once(self, items: list[dict[str, Any]]) -> None:
        """Each source event applied at most once: one history entry per event id and owner."""
        for owner, entries in history_of(items).items():
            ids = Counter(
                (s(e, "type"), _evidence(e).get("event_id"))
                for e in entries
                if s(e, "type").startswith("event:") or s(e, "type") == "suppressed"
            )
            twice = [key for key, n in ids.items() if n > 1 and key[1] is not None]
            assert not twice, f"event applied twice on {owner}: {twice}"

    def _forward_only(self, messages: dict[str, dict[str, Any]]) -> None:
        """A message's state only moves along the lifecycle: never back in the outcome order."""
        for pk, message in messages.items():
            state, before = s(message, "state"), self.states.get(pk)
            if before is not None and state != before:
                assert state in lifecycle_oracle.reachable(before), f"{pk} moved {before} → {state}"
            self.states[pk] = state
        for pk in self.states.keys() - messages.keys():
            raise AssertionError(f"message row disappeared: {pk}")

    @staticmethod
    def _intents_kept(items: list[dict[str, Any]], messages: dict[str, dict[str, Any]]) -> None:
        history = history_of(items)
        for message in messages.values():
            # A keyed message is its key's record: whole, and under the id its key names.
            if s(message, "idem_key"):
                assert all(s(message, a) for a in IDEMPOTENCY_RECORD), f"partial idempotency record: {message}"
                # In flight (a lease) or answered (the stored answer): never neither
                assert s(message, "lease_until") or s(message, "response"), (
                    f"key neither leased nor answered: {message}"
                )
                assert message_id_of(message) in {
                    ids.keyed_message_id(s(message, "idem_key"), generation) for generation in range(3)
                }, f"message id not derived from its key: {message}"
            # No intent lost: a defined state, and unsettled ones are on the due-work index.
            state = merged_state(items, message_id_of(message))
            assert state in DEFINED_STATES, message
            if state in DUE_WORK:
                due = due_kind_of(message)
                assert due == DUE_WORK[state], f"{state} message not on due work: {message}"
            # Every message has its first history entry.
            assert history.get(s(message, "pk")), f"message without history: {message}"

    @staticmethod
    def _one_reset_per_account(items: list[dict[str, Any]], messages: dict[str, dict[str, Any]]) -> None:
        """One reset record per account; it points at a message that exists."""
        resets = items_with(items, "RESET#")
        per_account = Counter(s(r, "pk") for r in resets)
        assert all(n == 1 for n in per_account.values()), per_account
        for reset in resets:
            assert s(reset, "sk") == "ACTIVE"
            assert f"MSG#{s(reset, 'message_id')}" in messages, f"reset without its message: {reset}"


def valid_tokens(
    account_id: str, candidates: list[str], items: list[dict[str, Any]], now_iso: str, owner: str = CALLER
) -> list[str]:
    """Tokens the ledger would accept right now from `owner` (active, unexpired, matching hash); consumes nothing."""
    pk = reset_pk(owner, account_id)
    records = [r for r in items if s(r, "pk") == pk and s(r, "state") == "active" and s(r, "valid_until") > now_iso]
    return [t for t in candidates for r in records if tokens.hashes_match(s(r, "token_hash"), t)]
