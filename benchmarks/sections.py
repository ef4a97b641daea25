"""README sections for capacity, Lambda CPU, the drain speedup and local send growth."""

from __future__ import annotations

from typing import Any

from benchmarks.figures import EVENT_SOURCES
from benchmarks.markdown import fmt, table

CAPACITY_RULES = (
    "Capacity is computed from the counted requests and item sizes by DynamoDB's published on-demand "
    'rules (developer guide, "Read/write capacity mode" and "Amazon DynamoDB Transactions: How it '
    'works", section "Capacity management for transactions"): a standard write costs 1 write request '
    "unit (WRU) per started KB of the larger of the item before and after; a transactional write 2 WRUs "
    'per started KB per item, because DynamoDB "performs two underlying reads or writes of every item in '
    'the transaction: one to prepare the transaction and one to commit the transaction"; a strongly '
    "consistent read 1 read request unit (RRU) per started 4 KB, an eventually consistent one half "
    "that, and a Query sums its returned items before rounding. A write to the due-work index (an "
    "item entering or leaving it: 1 write of the projected item; its key changing: 2) is counted "
    "with the table write that causes it. Two choices where the guide is silent: a ConditionCheck is "
    "billed like a transactional write of the checked item (conservative), and a cancelled "
    "transaction, which never commits, is billed for its prepare writes only (1 WRU per started KB "
    "per item). `ddb_capacity_cancelled_billed_as_attempted` in results.json keeps the older, more "
    "conservative rule (2 per item, as if written) beside it. Item sizes follow DynamoDB's sizing "
    "rule (attribute names plus values), read from moto's stored copy before and after each request. "
    "`ddb_capacity.replay` counts units of either kind (a replay may be answered by a write or by a "
    "read); events are the worst case over every measured event type and source, with the "
    "events that write the recipient's suppression state (bounces, complaints, invalid numbers) in "
    "their own figure."
)


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
    ]


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
    lines = ["## Ingestion: drain speedup under added latency", ""]
    if drained.get("reason") or not drained:
        return [*lines, f"Not measured: {drained.get('reason', 'see run.errors')}", ""]
    walls, emulation = drained["drain_median_ms"], drained["drain_moto_emulation_median_ms"]
    outside, concurrency = drained["drain_outside_emulation_median_ms"], drained["concurrency"]
    lines += table(
        ["side", "POLL_APPLY_CONCURRENCY", "median drain ms", "of which moto's emulation ms", "outside it ms"],
        [[side, concurrency[side], walls[side], emulation[side], outside[side]] for side in walls],
    )
    return [
        *lines,
        f"Speedup {fmt(drained['speedup'])}x outside the emulation (the bar: one at a time over concurrent, "
        f"ratio of medians); {fmt(drained['speedup_wall_with_emulation'])}x in raw wall time. "
        f"Latency model: {drained['latency_model']}, as an in-region round trip does; the sleep runs "
        "outside the lock that serializes moto's requests, so a waiting thread leaves the CPU and the "
        f"emulator to the others. Method: {drained['method']}. moto emulates one request at a time while "
        "DynamoDB serves independent items in parallel, so the emulation's share is taken out of both "
        "sides. Both sides run the same poller; only POLL_APPLY_CONCURRENCY differs.",
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
