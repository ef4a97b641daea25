"""README sections for capacity, Lambda CPU, the drain speedup and local send growth."""

from __future__ import annotations

from typing import Any

from benchmarks.figures import EVENT_SOURCES
from benchmarks.markdown import fmt, table

CAPACITY_RULES = """How capacity is billed, and the sources:

- A standard write costs 1 write request unit (WRU) per started KB of the larger of the item
  before and after; an item's size is its attribute names plus values. A write whose condition
  fails is billed too: "If a `ConditionExpression` evaluates to false during a conditional
  write, DynamoDB still consumes write capacity from the table: If the item does not currently
  exist in the table, DynamoDB consumes one write capacity unit. If the item does exist, the
  number of write capacity units consumed depends on the size of the item." (Amazon DynamoDB
  Developer Guide, "Working with items and attributes", section "Capacity units consumed by
  conditional writes",
  <https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/WorkingWithItems.html#WorkingWithItems.ConditionalWrites.ReturnConsumedCapacity>.)
- A transactional write costs 2 WRUs per started KB per item: "DynamoDB performs two underlying
  reads or writes of every item in the transaction: one to prepare the transaction and one to
  commit the transaction." ("Amazon DynamoDB Transactions: How it works", section "Capacity
  management for transactions",
  <https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling>.)
- **A cancelled transaction is billed as attempted**, every item at 2 WRUs per started KB as if it
  had committed. The transactions page quoted above does not say what a cancelled transaction
  consumes; the guide's page on capacity consumption, as quoted by two independent public
  write-ups read for this (we could not fetch AWS's page itself from here), says of the two
  underlying writes that "This capacity is consumed even when the transaction is canceled (for
  example, because a condition check fails)" ("DynamoDB read and write operations", section
  "Capacity unit consumption for write operations",
  <https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html>).
  Either way the worst case is billed. `ddb_capacity_cancelled_prepare_only` in results.json keeps
  v2's cheaper reading (1 WRU per item: the prepare write only) for comparison.
- **A ConditionCheck** is billed like a transactional write of the checked item (2 WRUs per
  started KB): the guide says nothing of its cost, so the worst case.
- A write to a global secondary index (an item entering or leaving it: 1 write of the projected
  item; its key changing: 2; a projected attribute changing: 1) is counted with the table write
  that causes it; a cancelled or failed write changes no index.
- A strongly consistent read costs 1 read request unit (RRU) per started 4 KB, an eventually
  consistent one half that; a Query sums its items before rounding.

Item sizes are read from moto's stored copy before and after each request
(benchmarks/capacity.py). `ddb_capacity.replay` counts units of either kind (a replay may be
answered by a write or by a read); the single-path event figures are the worst case over every
measured event type and source, with the events that write the recipient's suppression state
(bounces, complaints, invalid numbers) in their own figure."""


def capacity(results: dict[str, Any]) -> list[str]:
    wru, rru = results.get("ddb_capacity") or {}, results.get("ddb_read_capacity") or {}
    base = results.get("baseline_ddb_capacity") or {}
    rows = [
        [label, wru.get(name), rru.get(name), base.get(name) if name in base else None]
        for name, label in (
            ("send", "email send (happy path)"),
            ("replay", "replay (same Idempotency-Key; units of either kind)"),
            ("event_new", "new event, worst case (no suppression change)"),
            ("event_new_suppression", "new event that changes a suppression, worst case"),
            ("event_duplicate", "duplicate event, worst case"),
        )
    ]
    lines = ["## DynamoDB capacity per operation", ""]
    lines += table(["operation", "write units", "read units", "baseline write units"], rows)
    events = (results["detail"]["ddb_requests"].get("events")) or {}
    rows = []
    for source in EVENT_SOURCES:
        block = events.get(source) or {}
        changing = set(block.get("changes_suppression") or [])
        for kind, units in (block.get("new_capacity") or {}).items():
            duplicate = (block.get("duplicate_capacity") or {}).get(kind) or {}
            rows.append([kind, units["wru"], units["rru"], duplicate.get("wru"), "yes" if kind in changing else "no"])
    if rows:
        lines += ["Per event type:", ""]
        lines += table(["event", "new WRU", "new RRU", "duplicate WRU", "changes suppression"], rows)
    step = (events.get("mailgun") or {}).get("poll_step") or {}
    if step.get("events"):
        lines += [
            f"Mailgun poll step over {step['events']} events: the live pass applied "
            f"{step['applied_by_live_pass']} ({step['requests_live_pass']} requests), the finality pass read "
            f"{step['duplicates_on_finality_pass']} again as duplicates ({step['requests_finality_pass']} "
            f"requests, cursor commits included): {step['requests_per_event']} requests and "
            f"{step['write_request_units_per_event']} WRU per Mailgun event.",
            "",
        ]
    lines += infrai_rows(events.get("infrai") or {})
    return [*lines, CAPACITY_RULES, ""]


def infrai_rows(block: dict[str, Any]) -> list[str]:
    """Infrai pushes nothing: its cost is the send and the status poll (benchmarks/infrai.py)."""
    send, poll = block.get("send") or {}, block.get("status_poll") or {}
    if not send:
        return []
    rows = [
        ["Infrai send (api handler)", send["requests_per_send"], send["wru_per_send"], send["wru_max"]],
        ["Infrai status poll, per message asked", poll["requests_per_message"], poll["wru_per_message"], None],
    ]
    idle = poll.get("idle_pass") or {}
    return [
        *table(["operation", "requests", "WRU", "WRU max"], rows),
        f"Over {block['sends']} sends, then the status lane asking for {poll['messages_asked']} messages once "
        f"final ({poll['statuses_applied']} statuses applied); a cycle with nothing left to ask: "
        f"{idle.get('requests')} requests, {idle.get('wru')} WRU.",
        "",
        *infrai_complaint_rows(block.get("complaint_read") or {}),
    ]


# An assumption, not a measurement: Infrai's latency is not published (fixtures/provider-formats/infrai).
INFRAI_GET_MS = 100


def infrai_complaint_rows(read: dict[str, Any]) -> list[str]:
    """What reading delivered messages again for a complaint costs per million delivered messages:
    the complaint schedule's reads (providers/infrai/complaints.py) x the measured cost of one read."""
    from benchmarks.cost import MEMORY_GB, PRICES

    if not read.get("messages_read"):
        return []
    reads, schedule = read["reads_per_delivery"], read["schedule"]
    wru, rru = reads * read["wru_per_read"], reads * read["rru_per_read"]
    lambda_gb_s = reads * INFRAI_GET_MS / 1000 * MEMORY_GB["poller"]
    rows = [
        ["Infrai GET requests", f"{reads} M", "Infrai's price per read is not published"],
        ["DynamoDB requests", f"{reads * read['requests_per_read']:g} M", "the message read, its marker moved"],
        ["DynamoDB write request units", f"{wru:g} M",
         f"${wru * PRICES['dynamodb_write_request_unit_per_million']:.2f}"],
        ["DynamoDB read request units", f"{rru:g} M",
         f"${rru * PRICES['dynamodb_read_request_unit_per_million']:.2f}"],
        ["poller Lambda time", f"{lambda_gb_s * 1_000_000:,.0f} GB-s",
         f"${lambda_gb_s * PRICES['lambda_arm64_per_gb_second'] * 1_000_000:.2f} ({INFRAI_GET_MS} ms a GET, assumed)"],
    ]  # fmt: skip
    return [
        "Infrai complaint reads, per million delivered messages (a delivered message is read again: first "
        f"{schedule['first_read_seconds']} s after the delivery, then after as long as it has been delivered, at "
        f"most every {schedule['max_interval_seconds']} s, until {schedule['horizon_seconds']} s: {reads} reads; "
        f"one read measured over {read['messages_read']} messages: {read['requests_per_read']} requests, "
        f"{read['wru_per_read']} WRU, {read['rru_per_read']} RRU beyond the cycle's own index queries):",
        "",
        *table(["per million delivered", "count", "cost"], rows),
        "",
    ]


def cold_start(detail: dict[str, Any]) -> list[str]:
    cold = detail.get("cold_start") or {}
    lines = ["## Cold start: import, composition root and first invocation", ""]
    if not cold.get("handlers"):
        return [*lines, f"Not measured: {cold.get('reason', 'see run.errors')}", ""]
    base = cold["baseline_ms"]
    same_ms, same = cold.get("same_services_ms") or {}, cold.get("ratio_same_services") or {}
    rows = [["`import boto3` + a client + `put_item`", base["import"], base["composition"], base["invocation"],
             base["total"], base["cpu"], "—", "—", 1.0, 1.0]]  # fmt: skip
    for name, found in cold["handlers"].items():
        rows.append(
            [
                f"`{found['module']}`",
                found["import_ms"],
                found["composition_ms"],
                found["invocation_ms"],
                found["total_ms"],
                found["cpu_ms"],
                same_ms.get(name),
                same.get(name),
                cold["ratio_first_invocation"][name],
                cold["ratio_import"][name],
            ]
        )
    lines += table(
        [
            "target",
            "import ms",
            "composition ms",
            "first invocation ms",
            "total ms",
            "CPU ms",
            "same-calls Lambda ms",
            "ratio to it (the bar)",
            "one-client ratio",
            "import-only ratio (v2)",
        ],
        rows,
    )
    operations = cold.get("operations_first_invocation") or {}
    calls = "; ".join(
        f"{name}: {', '.join(sorted(found))}" for name, found in operations.items() if isinstance(found, dict)
    )
    return [
        *lines,
        f"Medians of {cold['runs_per_target']} fresh `python -I` processes per target, round-robin (one unmeasured "
        "run each first writes the bytecode caches), with a deployed Lambda's environment (AWS_LAMBDA_*, "
        "POWERTOOLS_*, table and queue names, X-Ray tracing enabled as in the stack) and every AWS call answered "
        "over a local socket by the canned endpoint (benchmarks/canned.py: valid empty answers, no emulator). "
        "Each child reads its event, then times the handler module's import, its composition root "
        "(`bootstrap.runtime()` with the flow its first invocation runs: the send flow for the api, the poll "
        "cycle for the poller, the event sink for the SMS handler; "
        "`bootstrap.status_out()` for the publisher) and its first invocation: a send (api), a poll cycle "
        "draining ten SES events (poller), a batch of five SNS SMS status records (sms_delivery_logs), a stream "
        "batch of three state changes (publisher). The bar compares each with the hand-written Lambda making the "
        "same AWS calls, measured in the same round-robin: `import boto3`, one client per service the handler "
        "used, one call of each operation its first invocation made (counted by the endpoint on the unmeasured "
        f"run: {calls or 'not counted'}). The one-client ratio is against `import boto3`, one DynamoDB client and "
        "one `put_item` (information: a handler with more services pays for their clients). Ratios of the median "
        "totals, wall time; CPU time is beside them, less sensitive to other load on the machine. The handlers "
        "make their clients from one botocore session (adapters/sdk.py), not through boto3.",
        "",
        "Bytecode: every child runs with the bytecode caches written, as a deployed function does when its asset "
        "ships bytecode (infra/bundling.py compiles it when synthesis has an interpreter of the runtime's Python "
        "version). An asset synthesized without one ships sources, and each cold start also compiles the modules "
        "it loads from the asset (Lambda's code directory is read-only, so nothing is kept): "
        + (
            ", ".join(f"{name} {ms} ms" for name, ms in compiled.items())
            if (compiled := cold.get("compile_ms_as_sources"))
            else "not measured"
        )
        + " on this machine (`compile_ms_as_sources`: the package's and its bundled dependencies' modules each "
        "handler loaded, compiled from source, median of 3 passes; the runtime's boto3 and botocore and the "
        "standard library come with their bytecode).",
        "",
        *COLD_START_LEVERS,
    ]


# Each lever's effect, measured side by side (the same children against the tree before and
# after it, alternating, 7 runs each, medians; CPU ms, less noisy than wall on a shared machine).
COLD_START_LEVERS = [
    "Levers, each measured side by side against the tree before it (7 fresh processes per target, "
    "alternating, median CPU ms; the machine's load average was 7-9 on 2 cores, so wall times ran at about "
    "twice CPU and only the side-by-side differences are figures):",
    "",
    "- No cyclic garbage collection until the first invocation returns, then `gc.freeze()` "
    "(handlers/startup.py): api 524 → 441, poller 671 → 591, sms_delivery_logs 379 → 340, publisher "
    "385 → 331 (the one-client Lambda unchanged, 217-227). Nearly every object a start allocates lives as "
    "long as the container; the collector's 150-190 passes over them (one a full collection) freed next to nothing.",
    "- A due-work pass asks the 16 shards of its kind at once (adapters/dynamodb/due_work.py): poller "
    "591 → 522 CPU, 1,424 → 1,222 ms wall. The first poll cycle still makes 96 of its 118 AWS calls on the "
    "due-work index (5 passes and the backlog count, 16 shards each), against one Query in the same-calls "
    "Lambda; deployed, the pass waits for about six round trips instead of 96.",
    "- The poller's first cycle from 118 AWS calls to 21 (the same-calls Lambda makes 6), medians of 9 fresh "
    "processes per tree, CPU ms (load average 4-5): a small due-work index read whole, one Scan per kind "
    "instead of 16 queries (adapters/dynamodb/due_work.py), 510 → 447; the ledger's client made once where "
    "the drain's first threads each made their own (three DynamoDB clients), 447 → 409; the resolver, "
    "resender and fallback sender built by the first cycle that needs them (14 modules fewer), 409 → 402; "
    "the watermarks the cycle moved aged without reading them back, and one scan proving nothing due and "
    "no unknown in place of the passes' six reads, 402 → 393. Left then: the settings' pydantic (below, "
    "since taken) and the ten events' apply. Then the watermark and cursor writes low-level instead of "
    "through PynamoDB's model (adapters/dynamodb/poller_state.py): 408 → 389 ms wall, 1.52 → 1.45 of the "
    "same-calls Lambda (11 runs, load average 1.3).",
    "- botocore clients instead of boto3 (adapters/sdk.py), lazy clients and lazy builders (bootstrap/lazy.py "
    "`on_first_use`, Table.client, the SQS adapters): in place before this round.",
    "- One botocore session per Lambda even once a library imports boto3 (adapters/sdk.py: the session "
    "kind is decided at the first client). Powertools' Feature Flags import boto3 on a send's first flag read, "
    "after the DynamoDB client; the SES client was then made from boto3's default session, a second session "
    "that loaded the credential chain and the endpoint data again. api, two runs of 21 fresh processes against "
    "the tree before: first invocation 179 → 137 and 186 → 142 ms, CPU 456 → 424 and 517 → 436 ms.",
    "- The api's composition builds none of the poller's stores (adapters/dynamodb/ledger.py, "
    "bootstrap/runtime.py: delivery events, due work, escalation timers, SMS receipts and webhook tokens on "
    "first use): the send no longer imports the event plans, the ingestion and status-out ports or the "
    "stream's decoding; composition 112 → 94 and 116 → 107 ms in the same two runs.",
    "- The settings declared without pydantic (settings_schema.py: frozen dataclasses, each field's variable, "
    "bounds and parser beside its default; settings.py, fragment.py, the slices' settings and infra/settings.py "
    "declared with it): the poller, sms_delivery_logs and publisher no longer import pydantic (asserted in "
    "tests/unit/test_cold_start.py); the api still does, for its request models. Side by side against the "
    "tree before (two rounds alternating the trees, 7 fresh processes per target each, median CPU ms, load "
    "average 1.7): api 407 → 379 and 464 → 415, poller 362 → 287 and 406 → 310, sms_delivery_logs 285 → 238 "
    "and 397 → 246, publisher 284 → 215 and 301 → 240; against the same-calls Lambda, api 1.798 → 1.730 and "
    "1.765 → 1.628, poller 1.513 → 1.214 and 1.436 → 1.143, sms_delivery_logs 1.546 → 1.281 and 1.914 → 1.244, "
    "publisher 1.584 → 1.171 and 1.376 → 1.283. This replaces the two pydantic levers before it: the settings' "
    "base model building its validator on first use (22.0 → 18.0 and 21.4 → 12.0 ms for importing and reading "
    "the settings) and, measured and not kept, the fragments' deferred builds (48 → 46 ms, within noise).",
    "- The send route without pydantic or Powertools' OpenAPI validation (handlers/api.py, send_route.py): "
    "the api's entry answers `POST /v1/messages` without the router, its body checked by hand against the "
    "documented model's limits (api/send_body.py; tests/unit/test_send_body.py feeds both the same "
    "generated bodies and compares their answers, field names and words included), and imports the "
    "Powertools router of every other route (handlers/api_routes.py, its request models, `openapi.params` "
    "and the validation middleware) on the container's first such request. An earlier attempt kept the "
    "model and validated with it directly: no difference beyond noise, because pydantic's import was what "
    "cost. The webhook body limit moved to request_gate.py, which had imported the webhook route's module "
    "(and the models) for it. Side by side against the tree before (two rounds alternating the trees, the "
    "cold-start section each): api total 411.6 → 329.6 and 430.7 → 331.3 ms; against the same-calls Lambda "
    "1.744 → 1.342 and 1.757 → 1.423; what a sources-only asset would compile on that cold start 298 → 180 "
    "and 296 → 168 ms. A send's CPU: the CPU section.",
    "- What the api still pays beyond the same-calls Lambda, as measured on its cold start: Python's dataclass "
    "decorator builds each class's methods with `exec`, about 47 ms for sendledger's ~105 value classes "
    "(domain 17, use cases 8, ports 7.5, settings 4); Powertools Feature Flags, whose package imports its "
    "AppConfig store and with it boto3 (25-30 ms, the file store included; deployed the AppConfig store needs "
    "it anyway); email_validator (18-25 ms, its RFC patterns compiled on import; the send's address check); "
    "and Powertools' event handler package, which imports its AppSync resolver and with it asyncio (about "
    "20 ms under `-X importtime`) whichever resolver is used.",
    "",
]


def cpu(results: dict[str, Any]) -> list[str]:
    detail = results["detail"]
    traffic = (detail.get("traffic") or {}).get("cpu") or {}
    ingest = detail.get("ingest_cpu") or {}
    cpu_ms = ingest.get("cpu_ms_per_event") or {}
    spread = ingest.get("spread") or {}
    concurrency = ingest.get("concurrency") or {}
    lines = ["## CPU: send and ingestion against their baselines", ""]
    rows = [
        [
            "Lambda CPU per send, over the traffic mix (one run)",
            traffic.get("ours_median_ms"),
            traffic.get("baseline_median_ms"),
            traffic.get("ratio_of_medians"),
            "—",
            "Powertools `@idempotent` baseline, benchmarks/baseline.py",
        ],
    ]
    for side, label in (("threaded", "the bar"), ("inline", "information")):
        found = spread.get(side) or {}
        rows.append(
            [
                f"CPU per applied SES event, the poller's drain, {side} "
                f"(POLL_APPLY_CONCURRENCY {concurrency.get(side)}; {label})",
                cpu_ms.get(side),
                cpu_ms.get("baseline"),
                found.get("median"),
                f"{fmt(found.get('min'))} to {fmt(found.get('max'))}" if found else "—",
                "plain boto3 consumer, benchmarks/consumer_baseline.py",
            ]
        )
    lines += table(["figure", "sendledger ms", "baseline ms", "ratio (median)", "runs' range", "baseline"], rows)
    return [
        *lines,
        f"Send: {traffic.get('method', 'not measured')} ({traffic.get('samples')} pairs; the baseline handles SMS with "
        "SNS Publish and renders both templates itself); the bar is the ratio of the medians. The send answered "
        "by the api's entry without pydantic or the router's validation (handlers/send_route.py), against the tree "
        "before, two rounds alternating the trees: 1.016 → 0.909 and 1.016 → 0.935. Ingestion: "
        f"{ingest.get('method', 'not measured')}. Ours is the SES lane's `usecases.queued_events.drain` as the "
        "scheduled poller runs it (threaded: receives, applies and deletes overlap on the deployed pool) and, "
        "beside it in the same child, on a composition root that differs only in a concurrency of 1 (inline: "
        "what the pool's hand-off costs is the difference); the baseline receives ten, parses each body with "
        "`json` (the SNS envelope, then the SES event), applies it with one conditional boto3 `update_item` and "
        "deletes the batch. A run's ratio is the median of its rounds over the baseline's; the bar is the median "
        f"of {ingest.get('runs')} runs' ratios (each run a fresh child process, its own endpoint), their range "
        "beside it (one run alone moved between 1.14 and 1.54 from run to run before). The milliseconds are "
        "the runs' medians. Voluntary context switches per event (threaded, inline, baseline): "
        f"{_switches(ingest)}; each is a thread blocked and woken again, which costs CPU (more across two cores): "
        "the drain's workers take their next call themselves, so what remains is the threads taking the GIL from "
        "one another at every point the SDK's HTTP stack releases it. The endpoint answers at once, where the "
        f"threads have no wait to overlap; {_at_round_trip(ingest)} No emulator's work is in any figure, and "
        "nothing is subtracted or scaled.",
        "",
    ]


def _at_round_trip(ingest: dict[str, Any]) -> str:
    found = ingest.get("at_round_trip") or {}
    ratio, cpu_ms = found.get("ratio") or {}, found.get("cpu_ms_per_event") or {}
    if not ratio:
        return ""
    return (
        f"at modelled round trips ({found.get('method')}) the ratios are threaded {fmt(ratio.get('threaded'))}, "
        f"inline {fmt(ratio.get('inline'))} ({fmt(cpu_ms.get('threaded'))}, {fmt(cpu_ms.get('inline'))} and "
        f"{fmt(cpu_ms.get('baseline'))} ms per event): a sequential consumer sleeps and wakes once per request."
    )


def _switches(ingest: dict[str, Any]) -> str:
    found = ingest.get("context_switches_per_event") or {}
    return ", ".join(fmt(found.get(side)) for side in ("threaded", "inline", "baseline"))


def lambda_cpu(timing: dict[str, Any]) -> list[str]:
    lines = ["## Send CPU vs the baseline (outside the AWS emulation)", ""]
    lines += table(
        ["", "sendledger", "baseline", "ratio (the bar)"],
        [
            [
                "median Lambda CPU ms per send",
                timing.get("ours_lambda_cpu_median_ms"),
                timing.get("baseline_lambda_cpu_median_ms"),
                timing.get("lambda_cpu_ratio_of_medians"),
            ]
        ],
    )
    return [
        *lines,
        "Per sample: process CPU time (`time.process_time`) around the send, minus the calling thread's "
        "CPU time inside moto's stubbed send (`BotocoreStubber.__call__`: the emulation, and the wait for "
        "the lock that lets in-process moto take one request at a time); the same interleaved samples as the wall-time "
        "comparison. The bar is the ratio of the medians. The in-process wall-time ratio is reported but "
        "not a bar: it mostly measures moto's emulation, not the product.",
        "",
    ]


def drain(detail: dict[str, Any]) -> list[str]:
    drained = detail.get("ingest_drain") or {}
    lines = ["## Ingestion: drain speedup, measured", ""]
    if drained.get("reason") or not drained.get("speedup"):
        return [*lines, f"Not measured: {drained.get('reason', 'see run.errors')}", ""]
    walls, per_second, concurrency = drained["drain_median_ms"], drained["events_per_second"], drained["concurrency"]
    lines += table(
        ["side", "POLL_APPLY_CONCURRENCY", "median drain ms", "events per second"],
        [[side, concurrency[side], walls[side], per_second[side]] for side in walls],
    )
    return [
        *lines,
        f"Speedup {fmt(drained['speedup'])}x (the bar: one at a time over concurrent, ratio of the median wall "
        f"times). Latency model: {drained['latency_model']}. Method: {drained['method']}. Both sides run the same "
        "poller code in one child process with a deployed poller's environment, each on its own composition root "
        "that differs only in POLL_APPLY_CONCURRENCY; the canned endpoint answers each call on a thread of its "
        "own after the modelled round trip, so concurrent calls overlap as they do against AWS, and nothing is "
        "emulated, so nothing is subtracted (v2 took moto's emulation out of a wall time; this is the wall time).",
        "",
    ]


def batching(detail: dict[str, Any]) -> list[str]:
    found = detail.get("ingest_batching_alternative") or {}
    lines = ["## Ingestion: batching events into transactions (the road not taken)", ""]
    if not found.get("client_cpu_ms_per_event"):
        return [*lines, f"Not measured: {found.get('reason', 'see run.errors')}", ""]
    cpu, units = found["client_cpu_ms_per_event"], found["write_units_per_event"]
    dollars = found["dynamodb_usd_per_million_events"]
    lines += table(
        ["each event written by", "client CPU ms per event", "write units per event", "DynamoDB USD per million"],
        [[name, cpu[name], units[name], dollars[name]] for name in cpu],
    )
    return [
        *lines,
        f"Method: {found['method']}. Batched, the client's CPU per event is "
        f"{fmt(found['cpu_ratio_batched_over_single'])}x a single write's; but every transaction item bills twice the "
        "write units, and one failed condition (a redelivered event) cancels the whole batch. The Lambda time "
        f"it would save is worth {fmt(found['lambda_usd_per_million_events_saved'])} USD per million events at "
        "the poller's memory size, against the extra write units above: the poller keeps one standard write "
        "per event.",
        "",
    ]


def growth(detail: dict[str, Any]) -> list[str]:
    measured = detail.get("local_send_growth") or {}
    lines = ["## Local stack: send latency growth", ""]
    if measured.get("reason") or not measured.get("ratio"):
        reason = str(measured.get("reason", "see run.errors")).removeprefix("skipped: ")
        return [*lines, f"Not measured: {reason}.", ""]
    lines += table(
        ["sends", "median ms"],
        [["1-100", measured["first_100_median_ms"]], ["1,001-1,100", measured["sends_1001_1100_median_ms"]]],
    )
    return [
        *lines,
        f"Ratio {fmt(measured['ratio'])} (the bar). {measured['method']}: one POST /v1/messages per send, "
        f"a fresh recipient and Idempotency-Key each, timed around the HTTP exchange; the scheduler polls "
        f"as in `make run`. That run took {fmt(measured.get('seconds'))} s; stopping the stack after the "
        f"last send took {fmt(measured.get('stop_seconds_after_last_send'))} s.",
        "",
    ]


def pynamodb(found: dict[str, Any]) -> list[str]:
    lines = ["## PynamoDB: what the ledger's models cost where they are used", ""]
    if not found.get("cpu_us_per_item"):
        return [*lines, f"Not measured: {found.get('reason', 'see run.errors')}", ""]
    cpu = found["cpu_us_per_item"]
    lines += table(
        ["import", "ms"],
        [[f"`{name}`", ms] for name, ms in found["import_ms"].items()],
    )
    lines += table(
        ["one item", "through a model, us", "low-level, us", "model / low-level"],
        [
            [
                "serialize (a write)",
                cpu["model_write"],
                cpu["low_level_write"],
                found["write_ratio_model_over_low_level"],
            ],
            [
                "deserialize (a read)",
                cpu["model_read"],
                cpu["low_level_read"],
                found["read_ratio_model_over_low_level"],
            ],
            *(
                [["a conditional update's expressions", cpu["model_update"], cpu["low_level_update"], ratio]]
                if (ratio := found.get("update_ratio_model_over_low_level")) is not None
                else []
            ),
        ],
    )
    return [
        *lines,
        f"Method: {found['method']}; 1-minute load average {found.get('load_average_1m')} on "
        f"{found.get('cpus')} CPUs. The models (adapters/dynamodb/models.py) declare the table: the local "
        "stack and the tests create it from them and a CDK test holds infra/data.py to them.",
        "",
        "Where they are used (adapters/dynamodb/modelled.py, over the ledger's one client, so requests and "
        "capacity are unchanged): the webhook function's replay tokens and the admin routes' caller-settings "
        "write (the poller's watermark and log-cursor writes and its cursor read went low-level: every cycle "
        "makes them, its first included, where the import cost the cold start about 19 ms). Each imports the "
        "models on its first use, never at a handler's import (modules loaded by importing each handler are "
        "unchanged: api 392, poller 175, publisher 233, callbacks 143, sms_delivery_logs 160 beyond the bare "
        "interpreter), so the import above lands on the first webhook and the first admin write of a "
        "container. Where they are not: the api's send path and the callbacks Lambda read caller settings and "
        "the watermark low-level, on their cold start, where the import (the first table's last row) is "
        "thousands of times the read's own CPU (the deserialize row); the send and ingest transactions keep "
        "the low-level builder (their write-once `h:` history attributes are beyond PynamoDB, and serializing "
        "through a model costs the multiple above per item on the hot path).",
        "",
    ]


def sms_cap(found: dict[str, Any]) -> list[str]:
    lines = ["## SMS daily cap: the overshoot a capped caller gets", ""]
    if found.get("overshoot_segments") is None:
        return [*lines, "Not measured: see run.errors", ""]
    rate, lag = fmt(found["rate_segments_per_second"]), fmt(found["stream_lag_seconds"])
    lines += [
        f"A caller capped at {fmt(found['cap'])} segments sends 1-segment SMS at {rate} a second (its "
        f"ceiling through the API, `api_rate_limit`), round-robin over {found['containers']} api containers, "
        f"with the publisher counting each record {lag} s after its commit (benchmarks/sms_cap.py: the real "
        "send path and publisher over moto, on a simulated clock).",
        "",
    ]
    lines += table(
        ["accepted", "refused after", "counted by the publisher", "overshoot (segments)", "bar (segments)"],
        [
            [
                found["accepted"],
                found["refused"],
                found["counted_by_publisher"],
                found["overshoot_segments"],
                found["bar_segments"],
            ]
        ],
    )
    return lines
