"""Named sabotages: each one breaks one invariant, and the reliability suite must notice.

A sabotage is data: a search-and-replace on one file of a scratch copy of the project. For
each, the runner copies the project into a temporary directory (the existing .venv is linked,
not rebuilt), applies the replacement there and runs the reliability suite only, expecting it
to FAIL:

    exit 1 → killed (the first failing test is recorded), exit 0 → survived, else → error
    (pytest-xdist reports a `-x` stop as exit 2 "Interrupted": with a failed test, that is a kill).

A sabotage may name its `killers`: the fast tests near the invariant (unit tests over the fakes,
integration tests) that must each fail under it. Those are run instead of the suite, each to the
end, and the sabotage counts as killed only when every one of them failed; the named killers are
first run once on the unsabotaged copy, and must all pass (else no sabotage is run).

An unsabotaged copy runs first, to the end (the baseline): a test that already fails on the
real code would "kill" every sabotage, so those tests are deselected from the sabotaged runs
(and listed); if the baseline cannot even run, no sabotage is. The copy holds the tracked files
and the untracked ones git does not ignore, as they are in the work tree (tests being written
count); the repository itself is never modified.

    python -m tests.reliability.sabotage            # all of them, table + JSON
    python -m tests.reliability.sabotage --list
    python -m tests.reliability.sabotage --only sms-cursor-before-apply

Exit status: 0 only when every sabotage run was killed; 1 when one survived or errored; 2 when
a sabotage is stale (its `old` text no longer occurs exactly once: fix the sabotage, not the code).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RESULTS_DIR = ROOT / "mutants"  # gitignored: everything `make mutation` writes besides the docs section
RESULTS_JSON = RESULTS_DIR / "sabotage.json"
LOGS_DIR = RESULTS_DIR / "sabotage-logs"
SUITE = ["-m", "pytest", "-q", "-x", "-n", "2", "-p", "no:cacheprovider", "tests/reliability"]
SUITE_COMMAND = "pytest " + " ".join(SUITE[2:])
BASELINE_SUITE = [arg for arg in SUITE if arg != "-x"]  # to the end: every test that fails without sabotage
# A sabotage's own killers: each of them, to the end, in one process (they take seconds).
KILLERS = ["-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider"]
TIMEOUT_SECONDS = 900  # a sabotage that hangs the suite is an error, not a kill

KILLED, SURVIVED, ERROR = "killed", "survived", "error"
PASSED, FAILED = "passed", "failed"  # the baseline's results

# Environment that would make the scratch run read or write outside its copy.
_SCRUBBED_ENV = ("PYTHONPATH", "SENDLEDGER_RELIABILITY_FIGURES", "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")


@dataclass(frozen=True)
class Sabotage:
    name: str
    why: str  # the invariant it breaks
    file: str  # relative to the repository root
    old: str  # must occur exactly once in the file
    new: str
    # The fast tests near the invariant that must each fail under it (node ids or paths); when
    # given, they are run instead of the reliability suite (each of them, to the end), and the
    # sabotage is killed only when every one of them failed.
    killers: tuple[str, ...] = ()


FUNCTIONS = "functions/sendledger"
POLL = f"{FUNCTIONS}/usecases/poll.py"
QUEUE_DRAIN = f"{FUNCTIONS}/usecases/queue_drain.py"
SEND = f"{FUNCTIONS}/usecases/send.py"
INTENTS = f"{FUNCTIONS}/usecases/intents.py"
RESOLVE = f"{FUNCTIONS}/usecases/resolve_unknown.py"
DUE_WORK = f"{FUNCTIONS}/usecases/due_work.py"
DYNAMODB = f"{FUNCTIONS}/adapters/dynamodb"
MESSAGE_ITEM = f"{DYNAMODB}/messages.py"
RECIPIENT_ITEM = f"{DYNAMODB}/recipients.py"
RESET_ITEM = f"{DYNAMODB}/resets.py"
EVENT_WRITES = f"{DYNAMODB}/events.py"
KEYS = f"{DYNAMODB}/keys.py"
AWS = f"{FUNCTIONS}/adapters/aws.py"
SDK = f"{FUNCTIONS}/adapters/sdk.py"
MESSAGES = f"{FUNCTIONS}/domain/messages.py"
RULES = f"{FUNCTIONS}/domain/suppression_rules.py"
SMS_LANE = f"{FUNCTIONS}/providers/sns/lane.py"
SMS_EVENTS = f"{FUNCTIONS}/providers/sns/events.py"
STATE_CHANGES = f"{FUNCTIONS}/domain/state_changes.py"
STREAM = f"{DYNAMODB}/stream.py"
EVENTBRIDGE = f"{FUNCTIONS}/adapters/eventbridge.py"
PUBLISHER = f"{FUNCTIONS}/handlers/publisher.py"
CALLBACKS = f"{FUNCTIONS}/handlers/callbacks.py"
CALLBACK_BATCH = f"{FUNCTIONS}/usecases/callback_batch.py"
CALLERS = f"{FUNCTIONS}/domain/callers.py"
VIEWS = f"{FUNCTIONS}/usecases/views.py"
MESSAGE_READS = f"{FUNCTIONS}/usecases/messages.py"
SUPPRESSIONS = f"{FUNCTIONS}/usecases/suppressions.py"
CONFORMANCE = "client/sendledger_client/conformance.py"

GATE_SEED = os.environ.get("SENDLEDGER_HYPOTHESIS_SEED") or str(secrets.randbelow(2**32))

# Considered and left out, because no behaviour can tell them from the product as it is:
# - the reset mint's condition on the previous token hash: the same transaction's condition on
#   the mail's state (pending/retry → sending) already lets only one of two racing mints commit,
#   and either guard alone keeps one valid token (defence in depth, removing one is equivalent);
# - "nothing left behind" in the SES drain: a message left behind in a cycle is either received
#   again in it (the batch is not empty, same answer) or invisible until a later cycle, which
#   then advances the watermark past it all the same.
SABOTAGES: tuple[Sabotage, ...] = (
    Sabotage(
        "sms-cursor-before-apply",
        "SMS log cursor is committed only after the page is applied: a crash mid-page loses records",
        SMS_LANE,
        old="""\
            fresh = [record for record in page.events if record.log_event_id not in seen]
            _apply_records(sink, fresh, lane.concurrency, report)
            state = advance_cursor(state, page.events)
            updated = json.dumps({**cursor, group: state}, sort_keys=True, separators=(",", ":"))
            if updated != raw:
                # Committed only now: everything derived from this page is persisted.
                stored.put_cursor(SOURCE, raw, updated, lane.clock.now())
                raw, cursor = updated, json.loads(updated)
""",
        new="""\
            state = advance_cursor(state, page.events)
            updated = json.dumps({**cursor, group: state}, sort_keys=True, separators=(",", ":"))
            if updated != raw:
                stored.put_cursor(SOURCE, raw, updated, lane.clock.now())
                raw, cursor = updated, json.loads(updated)
            fresh = [record for record in page.events if record.log_event_id not in seen]
            _apply_records(sink, fresh, lane.concurrency, report)
""",
    ),
    Sabotage(
        "outcome-write-unconditional",
        "state never regresses: a provider answer recorded after the poller settled the message "
        "reopens it, escalated → accepted",
        MESSAGE_ITEM,
        old="        state_in(update, predecessors(outcome.new_state))\n",
        new="",
    ),
    Sabotage(
        "lifecycle-accepted-to-sending",
        "forbidden lifecycle edge: an accepted message may be sent again",
        MESSAGES,
        old="    S.SENDING: frozenset({S.ACCEPTED, S.UNKNOWN, S.PENDING, S.REJECTED}),\n",
        new="    S.SENDING: frozenset({S.ACCEPTED, S.UNKNOWN, S.PENDING, S.REJECTED}),\n"
        "    S.ACCEPTED: frozenset({S.SENDING}),\n",
        killers=(
            "tests/unit/test_message_states.py::test_an_accepted_message_is_never_sent_again",
            "tests/reliability/test_oracles.py::test_the_conditional_writes_allow_list_is_the_oracles",
        ),
    ),
    Sabotage(
        "carrier-block-permanent",
        "only the listed SMS strings suppress: 'Phone carrier has blocked this message' is transient",
        SMS_EVENTS,
        old="""\
        "Destination is blacklisted",
    )
)
TRANSIENT = frozenset(
    normalised(text)
    for text in (
        "Blocked as spam by phone carrier",
        "Message body is invalid",
        "Phone carrier has blocked this message",
""",
        new="""\
        "Destination is blacklisted",
        "Phone carrier has blocked this message",
    )
)
TRANSIENT = frozenset(
    normalised(text)
    for text in (
        "Blocked as spam by phone carrier",
        "Message body is invalid",
""",
        killers=(
            "tests/unit/test_events_parsing.py::test_a_carrier_block_is_transient_and_does_not_suppress",
            "tests/reliability/test_oracles.py::test_documented_sms_failure_strings_through_the_parser",
        ),
    ),
    Sabotage(
        "send-path-hidden-read",
        "2 DynamoDB requests per send, counted on every client, not only the ledger's own: "
        "a GetItem through a fresh boto3 client",
        INTENTS,
        old="""\
        for _ in range(MAX_INTENT_ATTEMPTS):
            conflict = self.messages.commit_intent(intent)
""",
        new="""\
        import boto3  # peek at the key first

        boto3.client("dynamodb").get_item(
            TableName=self.settings.table_name,
            Key={"pk": {"S": f"MSG#{intent.message.message_id}"}, "sk": {"S": "MSG"}},
        )
        for _ in range(MAX_INTENT_ATTEMPTS):
            conflict = self.messages.commit_intent(intent)
""",
    ),
    Sabotage(
        "intent-without-suppression-check",
        "the intent transaction condition-checks the recipient's suppression: a suppressed recipient is sent to",
        RECIPIENT_ITEM,
        old="    suppression_condition(update, version)\n",
        new="",
    ),
    Sabotage(
        "event-dedupe-unconditional",
        "events are deduplicated by source event id: a redelivered event is applied twice",
        EVENT_WRITES,
        old="derived_from=event.dedupe_key, within=within)",
        new="derived_from=None, within=within)",
    ),
    Sabotage(
        "history-key-reused",
        "history is append-only on never-reused keys: two entries in one millisecond collide",
        KEYS,
        old='    return f"{int(at.timestamp() * 1000):013d}.{step:02d}.{crockford(secrets.randbits(60), 12)}"',
        new='    return f"{int(at.timestamp() * 1000):013d}.{step:02d}"',
    ),
    Sabotage(
        "idempotency-key-reclaimable",
        "one intent, one send: a second container claims an in-progress key at once and sends again",
        MESSAGE_ITEM,
        old="""\
        tx.put("message", message_item(intent, stored), expression.absent("pk"), expression)
""",
        new="""\
        reclaimable = expression.absent("pk") | expression.present("lease_until")
        tx.put("message", message_item(intent, stored), reclaimable, expression)
""",
    ),
    Sabotage(
        "idempotency-lease-flipped",
        "a request still in flight answers 409 with Retry-After, a crashed one replays its message",
        SEND,
        old="    if record.lease_until > now:\n",
        new="    if record.lease_until < now:\n",
    ),
    Sabotage(
        "poller-expires-live-lease",
        "the poller honours the in-flight lease: a send still in flight is declared unknown",
        DUE_WORK,
        old="        for item in self.due_work.items(DueKind.INFLIGHT, now, BATCH):",
        new="        for item in self.due_work.items(DueKind.INFLIGHT, None, BATCH):",
    ),
    Sabotage(
        "absence-without-grace",
        "absence is proven only once the watermark passes send time + UNKNOWN_GRACE_SECONDS: "
        "a send accepted but not yet reported is sent twice",
        RESOLVE,
        old="    if absent_by_lookup or (watermark is not None and watermark > sent_at + grace):\n",
        new="    if absent_by_lookup or (watermark is not None and watermark > sent_at):\n",
    ),
    Sabotage(
        "outcome-rank-flipped",
        "a state never regresses: a late Delivery undoes a Bounce",
        MESSAGES,
        old="            return _OUTCOME_RANK[target] > _OUTCOME_RANK[current]\n",
        new="            return _OUTCOME_RANK[target] < _OUTCOME_RANK[current]\n",
    ),
    Sabotage(
        "sqs-delete-unapplied",
        "SQS messages are deleted only after the event is persisted: a failed apply or a poison "
        "message is deleted with the batch",
        QUEUE_DRAIN,
        old="""\
        if self._failed(future):
            self.failed_lanes.add(key)
            behind = self.lanes.pop(key, deque())
            self.waiting -= len(behind)
            self.left.update([message_id, *behind])
        elif future.result():
            self.deletable.append(message_id)  # persisted: it may be deleted now
        else:
            self.left.add(message_id)
""",
        new="""\
        self.deletable.append(message_id)  # whatever its apply did
        if self._failed(future):
            self.failed_lanes.add(key)
            behind = self.lanes.pop(key, deque())
            self.waiting -= len(behind)
            self.left.update(behind)
""",
    ),
    Sabotage(
        "transient-sms-suppresses",
        "a transient SMS failure ends the message failed without suppressing the number",
        SMS_EVENTS,
        old="    return Verdict(Action.NONE, reason, known=text in TRANSIENT)",
        new="    return Verdict(Action.SUPPRESS, reason, known=text in TRANSIENT)",
    ),
    Sabotage(
        "complaint-not-suppressing",
        "a complaint suppresses the recipient",
        RULES,
        old="return Verdict(Action.SUPPRESS, failure_reason(event.kind, feedback))",
        new="return Verdict(Action.NONE, failure_reason(event.kind, feedback))",
    ),
    Sabotage(
        "wrong-guess-not-counted",
        "lockout after RESET_MAX_FAILED_ATTEMPTS wrong tokens: the counter is set, not incremented",
        RESET_ITEM,
        old='        count = Update().add("failed_attempts", 1)\n',
        new='        count = Update().set("failed_attempts", 1)\n',
    ),
    Sabotage(
        "watermark-before-drain",
        "the SES watermark is the start of a cycle that drained the queue: set before the drain, a "
        "cycle whose events failed to apply still advances it, and absence is proven against evidence "
        "waiting in the queue (a blind resend)",
        POLL,
        old="            watermark = lane.run(self.sink, started, seconds_left, report)\n",
        new="            self.watermarks.set_watermark(lane.source, started)  # the cycle start, first\n"
        "            watermark = lane.run(self.sink, started, seconds_left, report)\n",
    ),
    Sabotage(
        "read-timeout-not-ambiguous",
        "a read timeout may follow acceptance: unknown, never a blind resend",
        AWS,
        old="""\
    if isinstance(exc, ReadTimeoutError | ConnectionClosedError):
        return ProviderResponse(CallResult.AMBIGUOUS, error_code=type(exc).__name__)
""",
        new="""\
    if isinstance(exc, ReadTimeoutError | ConnectionClosedError):
        return ProviderResponse(CallResult.UNAVAILABLE, error_code=type(exc).__name__)
""",
    ),
    Sabotage(
        "sdk-retries-provider-send",
        "the SDK never retries a send on its own: a read-timeout retry is a duplicate",
        SDK,
        old='NO_RETRIES: dict[str, Any] = {"total_max_attempts": 1, "mode": "standard"}',
        new='NO_RETRIES: dict[str, Any] = {"total_max_attempts": 3, "mode": "standard"}',
    ),
    Sabotage(
        "status-event-id-per-item",
        "one change is one event: a state seen on the message item and on its receipt is one id",
        STATE_CHANGES,
        old="""\
    if state in _ENTERED_ONCE:
        return _digest("message", message_id, state.value)
""",
        new="",
    ),
    Sabotage(
        "status-event-intent-unpublished",
        "no lost state-change event: the intent's first state is published too",
        STREAM,
        old="""\
def _message_item(old: Item, new: Item) -> list[StatusEvent]:
    before, after = _state(old), _state(new)
    if after is None or after is before:
""",
        new="""\
def _message_item(old: Item, new: Item) -> list[StatusEvent]:
    before, after = _state(old), _state(new)
    if after is None or after is before or before is None:
""",
    ),
    Sabotage(
        "status-partial-put-taken-as-success",
        "every state change reaches the bus: PutEvents answering 200 with FailedEntryCount > 0 "
        "(ThrottlingException, InternalFailure per entry) is a failure, not a success",
        EVENTBRIDGE,
        old='            if response.get("FailedEntryCount"):\n',
        new='            if response.get("ResponseMetadata", {}).get("HTTPStatusCode", 200) != 200:\n',
    ),
    Sabotage(
        "status-record-acknowledged-before-put",
        "a stream record is acknowledged only once its events are on the bus: put in the "
        "background, the record is done before its put, and a failed put loses its events",
        PUBLISHER,
        old="            publish_record(record, status.changes, status.bus, report, status.labels, status.receipts)\n",
        new="            import threading  # the record is acknowledged now, its events put meanwhile\n\n"
        "            put = (record, status.changes, status.bus, report, status.labels, status.receipts)\n"
        "            threading.Thread(target=publish_record, args=put).start()\n",
    ),
    Sabotage(
        "status-callback-deleted-before-post",
        "a callback leaves its queue only once the receiver answered 2xx: reported done while "
        "its POST is still in flight, a failed POST is lost",
        CALLBACKS,
        old="    outcomes = deliver_batch(\n",
        new="""\
    import threading  # the POSTs go on in the background: every record is done (deleted) now

    batch = [queued_of(record) for record in records]
    threading.Thread(
        target=lambda: deliver_batch(
            batch, account_id=queue_arn.split(":")[4], policy=status.policy, receivers=status.receivers,
            queue=status.queues(queue_arn), clock=status.clock,
        ),
        daemon=True,
    ).start()
    return {"batchItemFailures": []}
    outcomes = deliver_batch(
""",
    ),
    Sabotage(
        "callback-batch-waits-for-every-lane",
        "one caller's receiver delays only that caller: without the lanes' share, a receiver that "
        "never answers holds the whole batch for its POST timeout, and every caller queued behind it",
        CALLBACK_BATCH,
        old="        share = Share(clock.now() + timedelta(seconds=policy.lane_share_seconds))\n",
        new="        share = None\n",
        killers=(
            "tests/unit/test_callback_lanes.py::test_a_receiver_that_never_answers_holds_the_batch_for_one_share_not_its_timeout",
            "tests/reliability/test_callback_isolation.py::test_a_black_holed_receiver_does_not_delay_another_callers_callbacks",
        ),
    ),
    # --- issue 38: the four invariants no test guarded, and seven a single slow test held. Each
    # names the fast tests that must fail under it (the kill takes seconds, not a suite run).
    Sabotage(
        "lookup-absence-without-grace",
        "a lookup's \"not found\" is absence only after UNKNOWN_GRACE_SECONDS (the provider's index "
        "lags its sends): taken at once, a send the provider accepted is sent twice",
        RESOLVE,
        old="    absent_by_lookup = lookup is not None and lookup.finding is Finding.NOT_FOUND "
        "and now > sent_at + grace\n",
        new="    absent_by_lookup = lookup is not None and lookup.finding is Finding.NOT_FOUND\n",
        killers=(
            "tests/unit/test_lagging_lookup.py::test_not_found_inside_the_grace_is_no_proof_and_the_accepted_send_is_never_repeated",
            "tests/unit/test_lagging_lookup.py::test_not_found_after_the_grace_proves_absence_and_the_send_is_repeated_once",
            "tests/reliability/test_provider_legs.py::test_a_lookup_not_found_inside_the_grace_is_no_proof_per_provider[sendgrid]",
            "tests/reliability/test_provider_legs.py::test_a_lookup_not_found_inside_the_grace_is_no_proof_per_provider[infrai]",
        ),
    ),
    Sabotage(
        "caller-id-by-role-name",
        "a caller is its principal's whole ARN: a role's id from its name alone makes role `app` of "
        "two accounts one caller (keys, messages, resets, exports, caller settings shared)",
        CALLERS,
        old='        return hashed_id(f"tenant:{self.tenant}" if self.tenant else self.principal.arn)\n',
        new='        name_only = f"role/{self.principal.name}" if self.principal.kind is PrincipalKind.ROLE else None\n'
        '        return hashed_id(f"tenant:{self.tenant}" if self.tenant else name_only or self.principal.arn)\n',
        killers=(
            "tests/unit/test_callers.py::test_one_name_in_two_accounts_is_two_callers",
            "tests/integration/test_caller_accounts.py",
        ),
    ),
    Sabotage(
        "history-labelled-by-deployment",
        "a history entry of a provider act (outcome, lookup, resend) names the message's own provider, "
        "not the one the deployment uses now",
        VIEWS,
        old='                **({"provider": message.provider} if entry.type in PROVIDER_ACTS else {}),\n',
        new='                **({"provider": settings.email_provider.value} if entry.type in PROVIDER_ACTS else {}),\n',
        killers=(
            "tests/unit/test_provider_choice.py::test_after_a_provider_switch_every_provider_act_in_the_history_names_the_messages_own",
        ),
    ),
    Sabotage(
        "conformance-blind-retry-after-acceptance",
        "conformance's no_blind_retry fails a resend after any proof of acceptance (an event, a found "
        "lookup, an accepted outcome, a mail in the mailbox), not only one without a proof of absence",
        CONFORMANCE,
        old="    return not proven_absent or proven_accepted or mailed_before\n",
        new="    return not proven_absent\n",
        killers=(
            "tests/client/test_conformance.py::test_a_resend_after_any_proof_of_acceptance_is_blind_even_after_a_proof_of_absence",
            "tests/client/test_conformance.py::test_a_resend_while_a_mail_is_already_in_the_outbox_is_blind",
        ),
    ),
    Sabotage(
        "reset-key-without-caller",
        "a reset is keyed by caller + account: keyed by the account alone, one caller's request, "
        "consume or wrong guess reaches another's reset of the same account id",
        KEYS,
        old='    return f"{RESET_PK_PREFIX}{owner}#{account_id}"\n',
        new='    return f"{RESET_PK_PREFIX}-#{account_id}"\n',
        killers=(
            "tests/unit/test_reset_usecase.py::test_another_caller_cannot_replace_consume_lock_or_see_a_reset",
            "tests/integration/test_caller_accounts.py",
            "tests/integration/test_store_contract.py::test_the_fakes_answer_as_the_dynamodb_stores[resets_are_per_caller]",
        ),
    ),
    Sabotage(
        "message-readable-by-anyone",
        "a message is readable by its owner only (another caller's is indistinguishable from absent)",
        MESSAGE_READS,
        old="    if message is None or message.owner != caller:\n",
        new="    if message is None:\n",
        killers=(
            "tests/unit/test_message_reads.py",
            "tests/integration/test_caller_accounts.py",
        ),
    ),
    Sabotage(
        "admin-lift-without-actor-or-reason",
        "every admin act is audited: a lift (re-enable) records who did it and why",
        SUPPRESSIONS,
        old="        recipients.change(recipient.key, suppressed, reason, actor, "
        "expected_version=current.version, now=now)\n",
        new='        who, why = (actor, reason) if suppressed else ("", "")\n'
        "        recipients.change(recipient.key, suppressed, why, who, "
        "expected_version=current.version, now=now)\n",
        killers=("tests/unit/test_suppressions_usecase.py::test_a_lift_records_its_actor_and_reason",),
    ),
    Sabotage(
        "stale-eligibility-unguarded",
        "an intent written without reading the recipient asserts its last send is older than the "
        "stale bound: without that condition a recent send's outcome is not waited for (defer policy)",
        RECIPIENT_ITEM,
        old="            update.when(update.absent(LAST_SEND_AT) | "
        "update.at_most(LAST_SEND_AT, iso(last_send.value)))\n",
        new="            pass\n",
        killers=(
            "tests/integration/test_store_contract.py::test_the_fakes_answer_as_the_dynamodb_stores[last_send_condition]",
        ),
    ),
    Sabotage(
        "stale-label-from-the-new-marker",
        "an allow send's label is derived from the marker its own write replaced: recorded after "
        "the marker moved, every send's previous send is itself and no label is exact",
        RECIPIENT_ITEM,
        old="        update.copy_from(PREVIOUS_SEND_AT, LAST_SEND_AT, None)"
        ".copy_from(PREVIOUS_MESSAGE_ID, LAST_MESSAGE_ID, None)\n",
        new="        update.set(PREVIOUS_SEND_AT, iso(sent_at)).set(PREVIOUS_MESSAGE_ID, message_id)\n",
        killers=(
            "tests/integration/test_send_capacity.py::"
            "test_a_repeat_recipient_inside_the_window_costs_a_first_send_and_is_labelled_from_the_stream",
        ),
    ),
    Sabotage(
        "reset-remint-keeps-old-hash",
        "a re-mint swaps the token hash: kept, the earlier mailed token still works and the new one not",
        RESET_ITEM,
        old='        swap = Update().set("token_hash", new_token_hash)\n',
        new='        swap = Update().set("token_hash", record.token_hash)\n',
        killers=(
            "tests/integration/test_store_contract.py::test_the_fakes_answer_as_the_dynamodb_stores[reset_lockout_and_rearm]",
            "tests/integration/test_password_resets.py::test_reset_sends_a_link_and_the_token_is_single_use",
        ),
    ),
)


@dataclass
class Result:
    name: str
    why: str
    file: str
    result: str  # killed | survived | error
    seconds: float
    exit_code: int | None = None
    killed_by: str | None = None  # node id of the first failing test
    detail: str | None = None  # for errors: what went wrong
    log: str = ""  # the suite's output, relative to the repository root


class StaleSabotage(Exception):
    pass


# --- the project copy -----------------------------------------------------------------------


def project_files(root: Path = ROOT) -> list[str]:
    """Tracked files plus untracked ones git does not ignore: the tests other engineers are
    adding count before they are committed. Deleted-but-tracked paths are skipped.
    A snapshot (no .git) holds exactly those files: all of them."""
    if not (root / ".git").exists():
        return sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.is_file())
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        check=True,
        capture_output=True,
    ).stdout.decode()
    return sorted({path for path in listed.split("\0") if path and (root / path).is_file()})


def copy_project(
    files: Iterable[str], destination: Path, root: Path = ROOT, rename: Callable[[str], str | None] = str
) -> None:
    """Copy `files` into `destination`; `rename` maps a path to its place there (None: skip)."""
    for path in files:
        target = rename(path)
        if target is None:
            continue
        (destination / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / path, destination / target)


@contextmanager
def snapshot(files: list[str]) -> Iterator[Path]:
    """One copy of the work tree taken at the start: the baseline and every sabotage run on the
    same code however the work tree moves meanwhile (other engineers edit it while this runs)."""
    tree = Path(tempfile.mkdtemp(prefix="sabotage-snapshot-"))
    try:
        copy_project(files, tree)
        yield tree
    finally:
        shutil.rmtree(tree, ignore_errors=True)


def apply(sabotage: Sabotage, tree: Path) -> None:
    path = tree / sabotage.file
    if not path.is_file():
        raise StaleSabotage(f"sabotage {sabotage.name} is stale: {sabotage.file} does not exist")
    text = path.read_text()
    count = text.count(sabotage.old)
    if count != 1:
        raise StaleSabotage(
            f"sabotage {sabotage.name} is stale: its `old` text occurs {count} times in {sabotage.file} "
            "(expected exactly once); update the sabotage to the current code"
        )
    path.write_text(text.replace(sabotage.old, sabotage.new))


def check_all(sabotages: Iterable[Sabotage], root: Path = ROOT) -> list[str]:
    """Every sabotage's `old` occurs exactly once in the working tree: the messages of those that do not."""
    problems = []
    for sabotage in sabotages:
        path = root / sabotage.file
        count = path.read_text().count(sabotage.old) if path.is_file() else 0
        if count != 1:
            problems.append(f"{sabotage.name}: `old` occurs {count} times in {sabotage.file} (stale)")
    return problems


# --- one run ---------------------------------------------------------------------------------

# In pytest's short summary: "FAILED <node id> - <message>"; a parametrised id may hold spaces.
_FAILURE = re.compile(r"^(?:FAILED|ERROR) (\S+\.py(?:::.+?)?)(?: - .*)?$")
_SUMMARY = "short test summary info"
# pytest-xdist ends a `-x` run that met a failure as "Interrupted" (exit 2), not exit 1.
_XDIST_STOPPED = "stopping after"


def failures(output: str) -> list[str]:
    """Node ids of the failing tests, in the order of pytest's short summary (captured log
    lines such as "ERROR    sendledger..." come before it and are not failures)."""
    summary = output[output.rfind(_SUMMARY) :] if _SUMMARY in output else ""
    return [m.group(1) for m in map(_FAILURE.match, summary.splitlines()) if m]


def verdict(code: int | None, output: str) -> str:
    if code == 0:
        return SURVIVED
    if code == 1 or (code == 2 and _XDIST_STOPPED in output and failures(output)):
        return KILLED
    return ERROR


def failed(killer: str, failing: list[str]) -> bool:
    """Whether `killer` (a path, a test or a parametrised test's node id) has a failing test."""
    return any(node == killer or node.startswith((f"{killer}::", f"{killer}[")) for node in failing)


def killers_verdict(killers: tuple[str, ...], code: int | None, output: str) -> tuple[str, str | None]:
    """Killed only when every named killer failed: (result, the killers that did not)."""
    if code not in (0, 1):
        return ERROR, None
    failing = failures(output)
    passed = [killer for killer in killers if not failed(killer, failing)]
    return (SURVIVED, "still green: " + ", ".join(passed)) if passed else (KILLED, None)


def all_killers(sabotages: Iterable[Sabotage]) -> list[str]:
    return sorted({killer for sabotage in sabotages for killer in sabotage.killers})


def run_suite(tree: Path, args: list[str], log: Path, timeout: float) -> tuple[int | None, str]:
    """The suite in `tree` with the project's interpreter: (exit code, None on timeout; output)."""
    env = {key: value for key, value in os.environ.items() if key not in _SCRUBBED_ENV}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # The copy's client package, not the one the shared environment installed (editable, elsewhere).
    env["PYTHONPATH"] = str(tree / "client")
    # One seed for the baseline and every sabotage (a kill must not depend on the draw), and no
    # shrinking: the gate needs to know that a test fails, not the smallest failing example.
    env["SENDLEDGER_HYPOTHESIS_SEED"] = GATE_SEED
    env["SENDLEDGER_HYPOTHESIS_PROFILE"] = "sabotage"
    # Its own process group, so a timeout ends the xdist workers too.
    process = subprocess.Popen(
        [str(tree / ".venv" / "bin" / "python"), *args],
        cwd=tree,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=timeout)
        code: int | None = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        code = None
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(output)
    return code, output


def _error_detail(code: int | None, output: str, timeout: float) -> str:
    detail = f"timed out after {timeout:.0f} s" if code is None else f"pytest exit {code}"
    tail = [line for line in output.splitlines() if line.strip()][-2:]
    return detail + (": " + " | ".join(tail)[:300] if tail else "")


def run_one(sabotage: Sabotage | None, source: Path, files: list[str], timeout: float, deselect: list[str]) -> Result:
    """Copy, sabotage (None: the baseline), run; the scratch copy is removed afterwards."""
    name = sabotage.name if sabotage else "baseline"
    why, file = (sabotage.why, sabotage.file) if sabotage else ("the suite passes on the unsabotaged code", "")
    result = Result(name, why, file, ERROR, 0.0, log=str((LOGS_DIR / f"{name}.log").relative_to(ROOT)))
    tree = Path(tempfile.mkdtemp(prefix=f"sabotage-{name}-"))
    started = time.monotonic()
    try:
        copy_project(files, tree, root=source)
        # The existing environment, not a new one: the interpreter finds its packages through
        # the link, while cwd and pytest's pythonpath (functions, .) point at the copy.
        (tree / ".venv").symlink_to(ROOT / ".venv")
        if sabotage is not None:
            apply(sabotage, tree)
        if sabotage is not None and sabotage.killers:
            code, output = run_suite(tree, KILLERS + list(sabotage.killers), ROOT / result.log, timeout)
            result.exit_code = code
            result.result, result.detail = killers_verdict(sabotage.killers, code, output)
            result.killed_by = ", ".join(failures(output)) if result.result == KILLED else None
            return result
        args = (SUITE if sabotage else BASELINE_SUITE) + [f"--deselect={node}" for node in deselect]
        code, output = run_suite(tree, args, ROOT / result.log, timeout)
        result.exit_code = code
        if sabotage is None:
            result.result = PASSED if code == 0 else FAILED if code == 1 else ERROR
            result.killed_by = ", ".join(failures(output)) or None
        else:
            result.result = verdict(code, output)
            result.killed_by = next(iter(failures(output)), None) if result.result == KILLED else None
        if result.result == ERROR:
            result.detail = _error_detail(code, output, timeout)
    except StaleSabotage as exc:
        result.detail = str(exc)
    finally:
        shutil.rmtree(tree, ignore_errors=True)
        result.seconds = round(time.monotonic() - started, 1)
    return result


def run_killers_baseline(killers: list[str], source: Path, files: list[str], timeout: float) -> Result:
    why = "every named killer passes on the unsabotaged code"
    result = Result(
        "killers-baseline", why, "", ERROR, 0.0, log=str((LOGS_DIR / "killers-baseline.log").relative_to(ROOT))
    )
    tree = Path(tempfile.mkdtemp(prefix="sabotage-killers-"))
    started = time.monotonic()
    try:
        copy_project(files, tree, root=source)
        (tree / ".venv").symlink_to(ROOT / ".venv")
        code, output = run_suite(tree, KILLERS + killers, ROOT / result.log, timeout)
        result.exit_code = code
        result.result = PASSED if code == 0 else FAILED if code == 1 else ERROR
        result.killed_by = ", ".join(failures(output)) or None
        if result.result != PASSED:
            result.detail = _error_detail(code, output, timeout)
    finally:
        shutil.rmtree(tree, ignore_errors=True)
        result.seconds = round(time.monotonic() - started, 1)
    return result


# --- all of them -----------------------------------------------------------------------------


@dataclass
class Run:
    date: str
    command: str
    files: int
    seconds: float
    baseline: Result | None
    results: list[Result]
    deselected: list[str] = field(default_factory=list)  # tests failing on the real code
    killers_baseline: Result | None = None  # the named killers on the real code: all must pass

    @property
    def baseline_ok(self) -> bool:
        killers_ok = self.killers_baseline is None or self.killers_baseline.result == PASSED
        return killers_ok and (self.baseline is None or self.baseline.result in (PASSED, FAILED))

    @property
    def passed(self) -> bool:
        return self.baseline_ok and bool(self.results) and all(r.result == KILLED for r in self.results)

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        data["passed"] = self.passed
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Run:
        baseline = data.get("baseline")
        killers = data.get("killers_baseline")
        return cls(
            date=data["date"],
            command=data["command"],
            files=data["files"],
            seconds=data["seconds"],
            baseline=Result(**baseline) if baseline else None,
            results=[Result(**r) for r in data["results"]],
            deselected=list(data.get("deselected") or []),
            killers_baseline=Result(**killers) if killers else None,
        )


def select(only: list[str] | None) -> list[Sabotage]:
    if not only:
        return list(SABOTAGES)
    known = {s.name: s for s in SABOTAGES}
    unknown = [name for name in only if name not in known]
    if unknown:
        raise SystemExit(f"unknown sabotage(s): {', '.join(unknown)} (see --list)")
    return [known[name] for name in only]


def run_all(
    sabotages: list[Sabotage], timeout: float = TIMEOUT_SECONDS, baseline: bool = True, source: Path | None = None
) -> Run:
    """Baseline, then each sabotage, all copied from one snapshot (`source`, or one taken now)."""
    if source is None:
        with snapshot(project_files()) as taken:
            return run_all(sabotages, timeout, baseline, taken)
    problems = check_all(sabotages, source)
    if problems:
        raise StaleSabotage("stale sabotages, fix them before running:\n  " + "\n  ".join(problems))
    files = project_files(source)
    started = time.monotonic()
    run = Run(datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S"), SUITE_COMMAND, len(files), 0.0, None, [])
    named = all_killers(sabotages)
    if named:
        # A killer that fails on the real code would "kill" its sabotage: they must all pass first.
        run.killers_baseline = run_killers_baseline(named, source, files, timeout)
        print(
            f"killers on the real code: {run.killers_baseline.result} in {run.killers_baseline.seconds} s", flush=True
        )
        if not run.baseline_ok:
            run.seconds = round(time.monotonic() - started, 1)
            return run
    if baseline and any(not s.killers for s in sabotages):
        run.baseline = run_one(None, source, files, timeout, [])
        print(f"baseline: {run.baseline.result} in {run.baseline.seconds} s {run.baseline.killed_by or ''}", flush=True)
        if not run.baseline_ok:
            run.seconds = round(time.monotonic() - started, 1)
            return run
        # A test that fails without any sabotage cannot testify against one: leave it out.
        run.deselected = failures((ROOT / run.baseline.log).read_text())
    for sabotage in sabotages:
        result = run_one(sabotage, source, files, timeout, run.deselected)
        run.results.append(result)
        print(
            f"{result.name}: {result.result} in {result.seconds} s {result.killed_by or result.detail or ''}",
            flush=True,
        )
    run.seconds = round(time.monotonic() - started, 1)
    return run


def table(run: Run) -> str:
    rows = [("sabotage", "result", "seconds", "killed by / detail")]
    rows += [(r.name, r.result, f"{r.seconds:.1f}", r.killed_by or r.detail or "") for r in run.results]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)) + "  " + row[3]
        for row in rows
    ]
    killed = sum(r.result == KILLED for r in run.results)
    lines.append(f"{killed}/{len(run.results)} killed in {run.seconds:.1f} s")
    if run.deselected:
        lines.append(f"left out (they fail without any sabotage): {', '.join(run.deselected)}")
    if run.killers_baseline is not None and run.killers_baseline.result != PASSED:
        lines.append(f"named killers fail on the real code, no sabotage run: {run.killers_baseline.detail}")
    elif not run.baseline_ok and run.baseline is not None:
        lines.append(f"baseline error, no sabotage run: {run.baseline.detail}")
    return "\n".join(lines)


def write_json(run: Run, path: Path = RESULTS_JSON) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(run.to_json(), indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.reliability.sabotage", description=__doc__.split("\n")[0])
    parser.add_argument("--list", action="store_true", help="list the sabotages and whether each still applies")
    parser.add_argument("--only", action="append", metavar="NAME", help="run only this sabotage (repeatable)")
    parser.add_argument("--json", type=Path, default=RESULTS_JSON, help="results file (default mutants/sabotage.json)")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_SECONDS, help="seconds per suite run")
    parser.add_argument("--no-baseline", action="store_true", help="skip the unsabotaged control run")
    args = parser.parse_args(argv)
    if args.list:
        stale = {problem.split(":")[0] for problem in check_all(SABOTAGES)}
        for s in SABOTAGES:
            print(f"{s.name}{'  [STALE]' if s.name in stale else ''}\n    {s.file}\n    {s.why}")
        return 2 if stale else 0
    try:
        run = run_all(select(args.only), args.timeout, baseline=not args.no_baseline)
    except StaleSabotage as exc:
        print(exc, file=sys.stderr)
        return 2
    write_json(run, args.json)
    print(table(run))
    return 0 if run.passed else 1


if __name__ == "__main__":
    sys.exit(main())
