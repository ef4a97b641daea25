"""results.json from the raw measurements: headline figures (v2 keys kept, v3 keys added), bars, detail."""

from __future__ import annotations

from typing import Any

from benchmarks import bars, cost

# Event sources measured per event (benchmarks/ingestion.py; SendGrid: benchmarks/sendgrid_events.py).
EVENT_SOURCES = ("ses", "sms", "sendgrid", "mailgun")
TRAFFIC_OPERATIONS = ("send", "send_repeat_recipient", "replay", "reset", "event_new", "event_duplicate")


def _events(events: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Requests: worst case over every measured event kind and source (the bar holds for each)."""
    figures: dict[str, Any] = {"event_new": None, "event_duplicate": None}
    detail: dict[str, Any] = {}
    if not events:
        return figures, {"reason": "error: see run.errors.events"}
    if events.get("reason"):
        return figures, {"reason": events["reason"]}
    for source in EVENT_SOURCES:
        block = events.get(source)
        if not block or block.get("reason"):
            detail[source] = {"reason": (block or {}).get("reason", "not measured")}
            continue
        detail[source] = {
            "method": block["method"],
            "new": {f["event"]: f["requests"] for f in block["new"]},
            "duplicate": {f["event"]: f["requests"] for f in block["duplicate"]},
            "new_operations": {f["event"]: f["operations"] for f in block["new"]},
            "new_capacity": {f["event"]: _units(f) for f in block["new"]},
            "duplicate_capacity": {f["event"]: _units(f) for f in block["duplicate"]},
            "changes_suppression": [f["event"] for f in block["new"] if f.get("changes_suppression")],
        }
        if block.get("poll_step"):
            detail[source]["poll_step"] = block["poll_step"]
        for kind in ("new", "duplicate"):
            worst = max(f["requests"] for f in block[kind])
            key = f"event_{kind}"
            figures[key] = worst if figures[key] is None else max(figures[key], worst)
            figures[f"{key}_{source}"] = worst
    return figures, detail


def _units(figure: dict[str, Any]) -> dict[str, float]:
    return {"wru": figure["write_request_units"], "rru": figure["read_request_units"]}


def _worst(figures: list[dict[str, Any]], unit: str) -> float | None:
    return max((f[unit] for f in figures), default=None)


def _capacity(
    ours: dict[str, Any], events: dict[str, Any] | None, unit: str = "write_request_units"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(write units, read units) per single-path operation; events: worst case over kinds and sources."""
    wru: dict[str, Any] = {}
    rru: dict[str, Any] = {}
    send, replay = ours.get("send") or {}, ours.get("replay") or {}
    wru["send"], rru["send"] = send.get(unit), send.get("read_request_units")
    # A replay is bounded in units of either kind (it may be answered by a write or by a read).
    wru["replay"] = None if not replay else replay.get(unit, 0.0) + replay["read_request_units"]
    rru["replay"] = replay.get("read_request_units")
    new: list[dict[str, Any]] = []
    duplicate: list[dict[str, Any]] = []
    for source in EVENT_SOURCES:
        block = (events or {}).get(source) or {}
        new += block.get("new") or []
        duplicate += block.get("duplicate") or []
    groups = {
        "event_new": [f for f in new if not f.get("changes_suppression")],
        "event_new_suppression": [f for f in new if f.get("changes_suppression")],
        "event_duplicate": duplicate,
    }
    for name, group in groups.items():
        wru[name] = _worst(group, unit)
        rru[name] = _worst(group, "read_request_units")
    return wru, rru


def _traffic(found: dict[str, Any] | None) -> dict[str, Any]:
    """traffic.<operation>.{requests,wru,rru}.{p50,p95,max} (plus each channel's sends), and the
    sends' template reads (traffic.send.template_reads_per_send)."""
    table = (found or {}).get("traffic") or {}
    found_figures = {
        name: {unit: table[name][unit] for unit in ("requests", "wru", "rru")}
        for name in (*TRAFFIC_OPERATIONS, "send_email", "send_sms")
        if name in table
    }
    reads = (table.get("send") or {}).get("template_reads_per_send")
    if reads is not None and "send" in found_figures:
        found_figures["send"]["template_reads_per_send"] = reads
    return found_figures


def _cost_inputs(found: dict[str, Any], ingest: dict[str, Any], drained: dict[str, Any]) -> dict[str, Any] | None:
    """What the bill needs, from this run's figures (None when a figure it needs is missing)."""
    traffic = found.get("traffic") or {}
    table, cpu, fan_out = traffic.get("traffic") or {}, traffic.get("cpu") or {}, traffic.get("fan_out") or {}
    if not table or not cpu.get("ours_median_ms") or not ingest.get("cpu_ms_per_event"):
        return None
    calls = {
        "email": ["TransactWriteItems", "UpdateItem", "SendEmail"],
        "sms": ["TransactWriteItems", "UpdateItem", "Publish"],
    }
    send = {
        channel: {
            "duration_ms": cost.duration_ms(cpu["ours_median_ms"], calls[channel]),
            "wru_p95": table[f"send_{channel}"]["wru"]["p95"] or 0.0,
            "rru_p95": table[f"send_{channel}"]["rru"]["p95"] or 0.0,
            "wru_mean": table[f"send_{channel}"]["wru"].get("mean"),  # None: a run without means (p95 used)
            "rru_mean": table[f"send_{channel}"]["rru"].get("mean"),
            "log_bytes": table[f"send_{channel}"]["log_bytes"]["p50"] or 0,
        }
        for channel in ("email", "sms")
    }
    # The poller's wall time per event in a concurrent drain at a 10 ms round trip (measured).
    drain_ms = (drained.get("drain_median_ms") or {}).get("concurrent")
    per_event = (
        drain_ms / drained["events"]
        if drain_ms
        else cost.duration_ms(ingest["cpu_ms_per_event"]["sendledger"], ["UpdateItem"])
    )
    new = table["event_new"]
    events_per_send = fan_out.get("events_per_send") or {"email": 2.0, "sms": 1.0}
    publisher = ingest.get("publisher") or {}
    records = {channel: 3 + float(events_per_send[channel]) for channel in ("email", "sms")}
    return {
        "send": send,
        "event": {
            "duration_ms": per_event,
            "wru_p95": new["wru"]["p95"] or 0.0,
            "rru_p95": new["rru"]["p95"] or 0.0,
            "wru_mean": new["wru"].get("mean"),
            "rru_mean": new["rru"].get("mean"),
        },
        "events_per_send": events_per_send,
        # Per SES event type (the configuration set's choice of types is a lever of the bill).
        "ses_events_per_send": {
            kind: round(n / max((fan_out.get("accepted_by_provider") or {}).get("email", 0), 1), 4)
            for kind, n in (fan_out.get("ses_events") or {}).items()
        },
        "status_events_per_send": fan_out.get("status_events_per_send") or {"email": 3.0, "sms": 3.0},
        # The intent, the outcome and the recipient's marker, then one receipt write per event.
        "stream_records_per_send": records,
        "publisher_cpu_ms_per_record": publisher.get("cpu_ms_per_record", 0.0),
        # The publisher reads the message item (strongly consistent, 1 unit) for each receipt change.
        "publisher_rru_per_send": {channel: float(events_per_send[channel]) for channel in ("email", "sms")},
        # An `allow` send's eligibility label: one UpdateItem of the message item per labelled send.
        "labels_per_send": {
            channel: float(table.get("send_label", {}).get("per_send") or 0.0) for channel in ("email", "sms")
        },
        "label_wru_p95": float((table.get("send_label", {}).get("wru") or {}).get("p95") or 0.0),
        "label_wru_mean": (table.get("send_label", {}).get("wru") or {}).get("mean"),
        # An accepted SMS's receipt: one UpdateItem per SMS send, by the publisher (decision 2).
        "sms_receipts_per_send": {
            "email": 0.0,
            "sms": float(table.get("sms_receipt", {}).get("per_sms_send") or 0.0),
        },
        "sms_receipt_wru_p95": float((table.get("sms_receipt", {}).get("wru") or {}).get("p95") or 0.0),
        "sms_receipt_wru_mean": (table.get("sms_receipt", {}).get("wru") or {}).get("mean"),
        "event_log_bytes": ingest.get("log_bytes_per_event", 0),
        "publisher_log_bytes_per_record": publisher.get("log_bytes_per_record", 0),
        "sms_status_record_bytes": 520,
        "access_log_bytes": cost.access_log_bytes(),
    }


def _costs(inputs: dict[str, Any] | None) -> dict[str, Any]:
    if inputs is None:
        return {"reason": "error: a figure the bill needs was not measured"}
    bills: dict[str, Any] = {channel: cost.bill(channel, inputs) for channel in ("email", "sms")}
    bills["email_with_callbacks"] = cost.bill("email", inputs, callbacks=True)
    bills["email_all_levers"] = cost.bill("email", inputs, cost.LEVERS[-1].deployment)
    bills["email_p95_units"] = cost.bill("email", inputs, units=cost.Units.P95)
    bills["email_before"] = cost.bill("email", inputs, cost.BEFORE)
    return {**bills, "levers": cost.levers(inputs), "inputs": inputs}


def assemble(found: dict[str, Any], sections: dict[str, Any], errors: dict[str, str]) -> dict[str, Any]:
    cold = sections.get("cold_start") or {}
    asset = sections.get("asset") or {}
    ingest = sections.get("ingest_cpu") or {}
    drained = sections.get("drain") or {}
    ours_counts = found.get("ours") or {}
    base_counts = found.get("baseline") or {}
    timing = found.get("timing") or {}
    throughput = found.get("throughput") or {}
    growth = found.get("local_growth") or {}
    traffic = found.get("traffic") or {}
    event_figures, event_detail = _events(found.get("events"))

    ddb = {name: (ours_counts.get(name) or {}).get("requests") for name in ("send", "replay", "reset", "reset_mail")}
    ddb.update(event_figures)
    ddb["sms_send"] = (ours_counts.get("sms_send") or {}).get("requests")
    baseline_ddb = {name: (base_counts.get(name) or {}).get("requests") for name in ("send", "replay")}
    capacity, read_capacity = _capacity(ours_counts, found.get("events"))
    prepare_only, _ = _capacity(ours_counts, found.get("events"), "prepare_only_write_request_units")
    baseline_capacity = {name: (base_counts.get(name) or {}).get("write_request_units") for name in ("send", "replay")}
    costs = _costs(_cost_inputs(found, ingest, drained))
    results: dict[str, Any] = {
        # --- v2 keys (single-path figures) ----------------------------------------------------
        "ddb_requests": ddb,
        "baseline_ddb_requests": baseline_ddb,
        "ddb_capacity": capacity,
        "ddb_read_capacity": read_capacity,
        # Cancelled transactions are billed as attempted in ddb_capacity itself now; kept for v2 readers.
        "ddb_capacity_cancelled_billed_as_attempted": dict(capacity),
        "ddb_capacity_cancelled_prepare_only": prepare_only,
        "baseline_ddb_capacity": baseline_capacity,
        # v3: over the traffic mix (the happy-path figure is detail.send_time).
        "send_cpu_ratio_vs_baseline": (traffic.get("cpu") or {}).get("ratio_of_medians"),
        "send_time_ratio_vs_baseline": timing.get("ratio_of_medians"),
        "send_time_ratio_vs_baseline_over_http": (found.get("timing_http") or {}).get("ratio_of_medians"),
        "cold_start_ratio": {
            k: (cold.get("ratio_import") or {}).get(k) for k in ("api", "poller", "sms_delivery_logs")
        },
        "ingest_events_per_second": throughput.get("events_per_second"),
        "ingest_cpu_ms_per_event": (ingest.get("cpu_ms_per_event") or {}).get("sendledger"),
        "ingest_drain_speedup": drained.get("speedup"),
        "local_send_growth": growth.get("ratio"),
        "asset_bytes": asset.get("bytes"),
        "cost_per_million": {
            "email": {key: (costs.get("email") or {}).get(key) for key in ("total", "overhead")},
            "sms": {key: (costs.get("sms") or {}).get(key) for key in ("total", "overhead")},
            "email_send": (costs.get("email") or {}).get("total"),
            "sms_send": (costs.get("sms") or {}).get("total"),
        },
        # --- v3 keys ----------------------------------------------------------------------------
        "traffic": _traffic(traffic),
        "hot_partition_share": (traffic.get("hot_partition") or {}).get("share"),
        "cold_start_ratio_first_invocation": dict(cold.get("ratio_first_invocation") or {}),
        "ingest_cpu_ratio_vs_baseline": ingest.get("ratio"),
        # v4 (issue 36): the same-calls Lambda is the cold start's baseline; ingestion over runs.
        "cold_start_ratio_vs_same_calls": dict(cold.get("ratio_same_services") or {}),
        "ingest_cpu_ratio_runs": _ingest_runs(ingest),
        "drain_speedup_measured": drained.get("speedup"),
        "prices": cost.PRICES,
        "bars": {},
        "detail": {
            "ddb_requests": {
                "ours": ours_counts,
                "baseline": base_counts,
                "events": event_detail,
                "counting": (
                    "botocore before-call.dynamodb hook on every DynamoDB client of the process "
                    "(the ledger's own clients plus any client created later), moto in-process"
                ),
            },
            "traffic": traffic,
            "send_time": timing,
            "send_time_over_http": found.get("timing_http") or {},
            "cold_start": cold,
            "ingest_cpu": ingest,
            "ingest_throughput": throughput,
            "ingest_drain": drained,
            "ingest_batching_alternative": sections.get("batching") or {},
            "local_send_growth": growth,
            "asset": asset,
            "cost": {**costs, "assumed_latency_ms": cost.ASSUMED_LATENCY_MS, "memory_gb": cost.MEMORY_GB},
        },
    }
    results["bars"] = bars.evaluate(results, _reasons(found, sections, errors))
    return results


def _ingest_runs(ingest: dict[str, Any]) -> dict[str, Any] | None:
    """The threaded drain's ratio over runs (the bar: its median), the inline one's beside it."""
    spread, runs = ingest.get("spread") or {}, ingest.get("ratio_runs") or {}
    if "threaded" not in spread:
        return None
    return {**spread["threaded"], "runs": runs["threaded"], "inline": {**spread["inline"], "runs": runs["inline"]}}


def _reasons(found: dict[str, Any], sections: dict[str, Any], errors: dict[str, str]) -> dict[str, str]:
    """Why a bar's figure may be missing, per bar path (or figure group)."""

    def error(name: str) -> str:
        return f"error: {errors.get(name, 'not measured')}"

    reasons = {
        "ddb_requests": error("ddb_requests"),
        "ddb_capacity": error("ddb_requests"),
        "traffic": error("traffic"),
        "hot_partition_share": error("traffic"),
        "send_cpu_ratio_vs_baseline": error("traffic"),
        "send_time_ratio_vs_baseline_over_http": error("send_time_over_http"),
        "ingest_cpu_ratio_vs_baseline": error("ingest_cpu"),
        "drain_speedup_measured": error("drain"),
        "cold_start_ratio_first_invocation": error("cold_start"),
        "cold_start_ratio_vs_same_calls": error("cold_start"),
        "ingest_cpu_ratio_runs": error("ingest_cpu"),
        "cost_per_million": error("cost"),
        "local_send_growth": (found.get("local_growth") or {}).get("reason") or error("local_send_growth"),
    }
    events_reason = _events_reason(found.get("events"), errors)
    for name in ("event_new", "event_duplicate"):
        reasons[f"ddb_requests.{name}"] = events_reason
        reasons[f"ddb_capacity.{name}"] = events_reason
    reasons["ddb_capacity.event_new_suppression"] = (
        events_reason if not found.get("events") else "error: no measured event changed a suppression"
    )
    return reasons


def _events_reason(events: dict[str, Any] | None, errors: dict[str, str]) -> str:
    if events and events.get("reason"):
        return str(events["reason"])
    if events:
        found = [str((events.get(source) or {}).get("reason", "")) for source in ("ses", "sms")]
        return "; ".join(reason for reason in found if reason) or "error: no event measured"
    return f"error: {errors.get('events', 'not measured')}"
