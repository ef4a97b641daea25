"""README sections for the traffic model: its parameters and why, the per-operation figures, the hot partition."""

from __future__ import annotations

from typing import Any

from benchmarks.markdown import fmt, table

ROWS = (
    ("send", "send (every new send of the slice)", "send"),
    ("send_email", "send, email", "send"),
    ("send_sms", "send, SMS", "sms_send"),
    ("send_repeat_recipient", "send to a recipient mailed before", None),
    ("replay", "replay (same key, same body)", "replay"),
    ("reset", "password reset request", "reset"),
    ("event_new", "delivery event, new", "event_new"),
    ("event_duplicate", "delivery event, duplicate", "event_duplicate"),
    ("send_label", "eligibility label (publisher, off the API path)", None),
    ("sms_receipt", "SMS receipt (publisher, off the API path)", None),
)


def why(m: dict[str, Any]) -> str:
    """Why the model's values are realistic (its numbers read from the parameters themselves)."""
    returning = 1 - m["first_contact"] - m["follow_up"]
    return f"""Why these values:

- **Rate and containers.** The busy caller sends {fmt(m["busy_caller_per_second"])} a second in its busy
  hour (about {fmt(m["busy_caller_per_second"] * 86_400 / 1e6)} million a day at that rate); {m["other_callers"]}
  other callers share {fmt(m["other_callers_per_second"])} a second. At about 80 ms per send (measured Lambda
  CPU plus in-region round trips, see the cost table) that is {m["api_containers"]} warm api containers by
  Little's law; requests go to them at random, as Lambda's do. Each container served a request just
  before the slice starts: a busy container is never idle for long.
- **Repeat recipients.** Transactional mail goes to the same people again and again: sign-up,
  orders, alerts. Of the mail to people, {_pct(m["first_contact"])} is a first contact; {_pct(returning)}
  reaches someone mailed days before (log-normal gap, median {fmt(m["return_median_days"])} days, sigma
  {fmt(m["return_sigma"])}, up to {fmt(m["return_max_days"])} days); {_pct(m["follow_up"])} is a follow-up
  within one flow, seconds to minutes after the previous mail (verify then welcome, placed then paid,
  a code sent again; log-normal, median {fmt(m["follow_up_median_seconds"])} s). {_pct(m["shared_share"])}
  of a caller's mail goes to shared mailboxes and on-call phones (ops@, billing@, the pager),
  {m["shared_recipients"]} of them per caller, Zipf-distributed (s = 1): the busiest gets mail every second
  or so. Follow-ups and shared mailboxes are what land inside the stale-eligibility window
  (UNKNOWN_GRACE_SECONDS plus the watermark's lag, about 16 minutes): a send there cannot assert
  that the recipient's last send is older than the watermark minus the grace.
- **Payloads.** Addresses are first.last-style names at webmail and company domains (20-45
  characters), SMS numbers E.164; {_pct(m["sms_share"])} of sends are SMS. Idempotency keys are
  {", ".join(f"{_pct(w)} {shape}" for shape, w in m["key_shapes"])} (UUIDs, `order-<n>-<event>`, or
  derived from a body `event_id`). Params are prose with the ids, amounts and links transactional
  mail carries (it compresses about as English does), log-normal in length (median
  {fmt(m["params_median_chars"])} characters, sigma {fmt(m["params_sigma"])}, clipped to
  {m["params_min_chars"]}-{fmt(m["params_max_chars"])}): most are a name, an amount and a link, a few are
  long bodies.
- **Other requests.** {_pct(m["replay_share"])} of sends are retried by their client a moment later with
  the same key (a timeout, a 503): replays. {_pct(m["reset_share"])} of requests are password resets,
  {_pct(m["reset_again_share"])} of them asked again a minute later. {_pct(m["bounce_share"])} of email goes
  to hard-bouncing addresses and {_pct(m["complaint_share"])} to complainers, {_pct(m["sms_failure_share"])}
  of SMS to failing numbers (the simulator's addresses for each).
- **Events.** Every accepted send's provider events come from the local simulator (SES Send,
  Delivery, Bounce, Complaint via SNS to SQS; SNS SMS status records via a log subscription); a
  seeded sample of {m["events_sampled"]} is applied through the poller (one SQS record per invocation)
  and the SMS handler in the order they arrived (a Send before its Delivery), then applied again
  as duplicates. The baseline's timed sends go through the same simulator; their events are left
  out, as no deployment of ours sees them."""


def _value(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(f"{name} {weight}" for name, weight in value)
    return fmt(value)


def _pct(share: float) -> str:
    return f"{100 * share:g}%"


def model(detail: dict[str, Any]) -> list[str]:
    traffic = detail.get("traffic") or {}
    found = traffic.get("model") or {}
    played = traffic.get("slice") or {}
    lines = ["## Traffic model (benchmarks/traffic_model.py)", ""]
    if not found:
        return [*lines, f"Not measured: {traffic.get('reason', 'see run.errors')}", ""]
    lines += [
        f"A seeded model (seed {found.get('seed')}) of the traffic a deployment sees, played through the real "
        f"handlers against moto: one contiguous {fmt(found.get('slice_seconds'))}-second slice of the busy hour at "
        f"full rate ({fmt(played.get('requests_counted'))} requests counted), starting {played.get('start')}. "
        "For every recipient mailed in the slice, the send that preceded it (seconds to weeks earlier, drawn "
        f"from the model) is played first, uncounted ({fmt(played.get('earlier_sends_played'))} of them), through "
        "the same containers when it is recent, so each counted send meets the recipient item, the watermark and "
        "the container caches it would meet deployed. Each api container is its own composition root "
        "(`bootstrap.build_runtime()`, passed as `runtime=`); every runtime's clock reads the model's time, and "
        "the source watermarks are those a poller draining every 60 s leaves. Every fourth send is timed against "
        "the baseline instead of counted. "
        f"{fmt(played.get('sends_in_stale_window'))} of the counted sends went to a recipient mailed within the "
        "stale-eligibility window.",
        "",
        "| parameter | value |",
        "|---|---|",
    ]
    lines += [f"| `{name}` | {_value(value)} |" for name, value in found.items()]
    return [*lines, "", why(found), ""]


def figures(results: dict[str, Any]) -> list[str]:
    traffic = (results["detail"].get("traffic") or {}).get("traffic") or {}
    single = results.get("ddb_requests") or {}
    single_wru = results.get("ddb_capacity") or {}
    lines = ["## DynamoDB requests and capacity over the traffic mix", ""]
    if not traffic:
        return [*lines, "Not measured: see run.errors.", ""]
    rows = []
    for name, label, single_key in ROWS:
        entry = traffic.get(name) or {}
        req, wru, rru = entry.get("requests") or {}, entry.get("wru") or {}, entry.get("rru") or {}
        rows.append(
            [
                label,
                entry.get("count"),
                f"{fmt(req.get('p50'))} / {fmt(req.get('p95'))} / {fmt(req.get('max'))}",
                f"{fmt(wru.get('p50'))} / {fmt(wru.get('p95'))} / {fmt(wru.get('max'))}",
                f"{fmt(rru.get('p50'))} / {fmt(rru.get('p95'))} / {fmt(rru.get('max'))}",
                single.get(single_key) if single_key else None,
                single_wru.get(single_key) if single_key in single_wru else None,
            ]
        )
    lines += table(
        [
            "operation",
            "n",
            "requests p50 / p95 / max",
            "WRU p50 / p95 / max",
            "RRU p50 / p95 / max",
            "single path: requests",
            "single path: WRU",
        ],
        rows,
    )
    lines += [
        "Percentiles are nearest-rank over the operation's requests in the slice (p95: the smallest value at "
        "least 95% of them are at or under). The single-path columns are v2's figures: one first send to a fresh "
        "recipient on empty tables (benchmarks/ours.py). Units are billed as DynamoDB bills them (next sections): "
        "a cancelled transaction at its attempted cost.",
        "",
    ]
    return [*lines, *paths(results["detail"])]


def paths(detail: dict[str, Any]) -> list[str]:
    found = (detail.get("traffic") or {}).get("send_paths") or []
    if not found:
        return []
    rows = [
        [
            ", ".join(row["requests"]),
            row["sends"],
            f"{100 * row['share']:.1f}%",
            f"{fmt(row['wru']['p50'])} / {fmt(row['wru']['max'])}",
            ", ".join(f"{k} {v}" for k, v in sorted(row["history"].items())),
            row["in_stale_window"],
        ]
        for row in found
    ]
    return [
        "Which requests the counted sends took, and what the model says they were:",
        "",
        *table(["requests", "sends", "share", "WRU p50 / max", "recipient before", "in the stale window"], rows),
    ]


def hot_partition(detail: dict[str, Any]) -> list[str]:
    found = (detail.get("traffic") or {}).get("hot_partition") or {}
    lines = ["## Hot partition", ""]
    if found.get("share") is None:
        return [*lines, "Not measured: see run.errors.", ""]
    rows = [[f"`{entry['partition']}`", entry["share"]] for entry in found.get("top", [])]
    lines += table(["partition key (table or index)", "share of the slice's sends"], rows)
    return [
        *lines,
        f"`hot_partition_share` = {fmt(found['share'])}: the largest share of the slice's {fmt(found['sends'])} "
        "sends and replays (one busy caller sends 95% of them) that any single partition key of the table or of "
        "an index received. A partition key takes at most 1,000 write units a second, so a key that a share s of "
        "a caller's sends writes caps that caller at 1,000 / s units a second. Touched means: the table partition "
        "of every item a send's requests read or wrote, and, where a write changed an item's entry in a global "
        "secondary index, that index's partition keys before and after, as read from moto's copy of the items "
        "around each request (benchmarks/partitions.py). A slice at the hour's rate has the hour's shares; its "
        "sample of sends makes the largest one, if anything, higher than the hour's. Recipient keys are masked.",
        "",
    ]


def item_model(results: dict[str, Any]) -> list[str]:
    """Issue #36's decisions on the send's item model: what each write costs, and why."""
    traffic = (results["detail"].get("traffic") or {}).get("traffic") or {}

    def p95(operation: str, unit: str) -> str:
        return fmt(((traffic.get(operation) or {}).get(unit) or {}).get("p95"))

    label = traffic.get("send_label") or {}
    receipt = traffic.get("sms_receipt") or {}
    return [
        "## The send's item model: repeat recipients, SMS, replays (issue #36, decisions 1-3)",
        "",
        "Write units per send, as billed (2 per started KB per transaction item, 1 per standard write, 1 per "
        "index entry a write adds or removes):",
        "",
        *table(
            ["write", "email", "SMS", "what"],
            [
                ["intent: message item (transaction)", 2, 2, "one item under 1 KB"],
                ["intent: recipient update (transaction)", 2, 2, "suppression condition, marker, label inputs"],
                ["intent: evidence index entry", 1, 1, "KEYS_ONLY, written once"],
                ["intent: due-work index entry", 1, 1, "the in-flight marker"],
                ["outcome: message item (UpdateItem)", 1, 1, "was 2 for SMS: an item of a transaction"],
                ["outcome: due-work index entry removed", 1, 1, "in flight no more"],
                ["outcome: SNS receipt", "-", "-", "was 2 (a transaction item): now the publisher's, below"],
                [
                    "**total**",
                    "**8**",
                    "**8**",
                    f"measured p95: email {p95('send_email', 'wru')}, SMS {p95('send_sms', 'wru')} (was 11)",
                ],
            ],
        ),
        "**Repeat recipients (decision 1).** Under `allow` (every category's default) staleness labels a send "
        "but does not stop it, so the intent no longer conditions on the recipient's last send: an in-window "
        "repeat no longer pays a cancelled transaction and a second one. The recipient update records the "
        "label's inputs in the same write (`SET prev_send_at = if_not_exists(last_send_at, NULL), "
        "prev_message_id = if_not_exists(last_message_id, NULL), stale_after = <watermark - grace>, "
        "last_send_at = :now, ...`: SET's right-hand sides read the item as it was); the publisher, reading "
        "that update from the stream, appends `eligible` or `eligible_stale` to the message's history, exact "
        "and durable, off the API path. Its cost: "
        f"{fmt(label.get('per_send'))} labels per counted send (a password reset's mail is labelled too), "
        f"each {fmt((label.get('requests') or {}).get('p95'))} UpdateItem and "
        f"{fmt((label.get('wru') or {}).get('p95'))} write unit at p95 (the label row above; in the bill, "
        '"DynamoDB: eligibility labels"). `defer` keeps its condition, where staleness changes the action. '
        f"Repeat recipients now cost {p95('send_repeat_recipient', 'requests')} requests and "
        f"{p95('send_repeat_recipient', 'wru')} write units at p95.",
        "",
        "**SMS at the email budget (decision 2).** The SMS outcome wrote the SNS receipt (SNS's message id to "
        "ours: a status record names only SNS's) in a transaction with the message: message 2 + receipt 2, 11 "
        "in all. The outcome is now one `UpdateItem` on the message, as an email's (1 + 1 index = 2, 8 in all), "
        "and the publisher writes the receipt from the outcome's stream record (NEW_AND_OLD_IMAGES: the change "
        "that set `provider_message_id`), an `UpdateItem` of a ~0.2 KB item, off the API path: "
        f"{fmt(receipt.get('per_sms_send'))} per SMS send, {fmt((receipt.get('requests') or {}).get('p95'))} "
        f"request and {fmt((receipt.get('wru') or {}).get('p95'))} unit at p95 (the SMS receipt row above; in "
        'the bill, "DynamoDB: SMS receipts"). The alternatives, by the same arithmetic: the receipt written '
        "beside the outcome but outside a transaction is 3 requests and 9 units on the API path; a sparse "
        "keys-only index on the provider id adds 1 unit to the outcome (9) and makes every status record a "
        "Query before its write (2 requests, over the `event_new` bar); matching through the recipient item "
        "needs the id written there by the outcome (a second item again) and is ambiguous for a number "
        "texted twice. A status record on the publisher's receipt stays 1 request and 1 unit "
        f"(`event_new` p95 over all events, requests / units: {p95('event_new', 'requests')} / "
        f"{p95('event_new', 'wru')}). One that arrives first (the publisher behind) is refused on the "
        "missing receipt, reads the "
        "number's recipient item and its last two sends (2 BatchGetItem) and, when one names its id, "
        "writes that receipt itself, naming the send: 4 requests, and the publisher's write merges with it "
        "(`if_not_exists`); a duplicate dedupes on the receipt either way. A record no recent send names, "
        "while a send to the number is recent enough for its receipt to be on the way (15 minutes, three "
        "times the publisher's iterator-age alarm), is not applied: its source retries it. It is never "
        "guessed onto the number's last send.",
        "",
        "**Replays (decision 3).** A replay is the intent's transaction cancelled on the message item's "
        "condition. No AWS text bills a cancelled transaction for its prepare phase only and the response "
        "carries no ConsumedCapacity to settle it, so it is billed as attempted: 2 items x 2 units = 4, the "
        f"bar; measured p95 {p95('replay', 'requests')} request, {p95('replay', 'wru')} units. The optional "
        "client-marked retry read first (1 request, 1 read unit) was not built.",
        "",
    ]
