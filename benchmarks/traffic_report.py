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
  and the SMS handler, then applied again as duplicates."""


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
