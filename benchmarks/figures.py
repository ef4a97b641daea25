"""results.json from the raw measurements: headline figures, bars, detail."""

from __future__ import annotations

from typing import Any

from benchmarks import bars, cost

# Event sources measured per event (benchmarks/ingestion.py; SendGrid: benchmarks/sendgrid_events.py).
EVENT_SOURCES = ("ses", "sms", "sendgrid", "mailgun")


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
    """(write units, read units) per operation; events: worst case over kinds and sources.

    `unit` picks the write figure: the prepare-only bill of a cancelled transaction, or the
    conservative one ("conservative_write_request_units", billed as attempted)."""
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


def _costs(found: dict[str, Any], timing: dict[str, Any], throughput: dict[str, Any]) -> dict[str, Any]:
    ours_counts = found.get("ours") or {}
    costs: dict[str, Any] = {}
    cpu_ms = float(timing.get("ours_lambda_cpu_median_ms") or timing.get("ours_client_median_ms") or 0.0)
    if ours_counts.get("send"):
        costs["email_send"] = cost.send_cost(ours_counts["send"], "email", cpu_ms)
    if ours_counts.get("sms_send"):
        costs["sms_send"] = cost.send_cost(ours_counts["sms_send"], "sms", cpu_ms)
    events = found.get("events") or {}
    per_event_cpu = float(throughput.get("cpu_ms_per_event") or throughput.get("client_ms_per_event") or 0.0)
    by_kind: dict[str, Any] = {}
    for source, price in (("ses", cost.ses_event_cost), ("sms", cost.sms_event_cost)):
        block = events.get(source) or {}
        for figure in block.get("new") or []:
            by_kind[figure["event"]] = price(figure, per_event_cpu)
    if by_kind:
        # Headline: the commonest event, an SES Delivery; every kind is itemised beside it.
        typical = next((kind for kind in by_kind if kind == "ses:Delivery"), None)
        headline = typical or max(by_kind, key=lambda kind: by_kind[kind]["usd"])
        costs["event"] = {"event": headline, **by_kind[headline]}
        costs["event_by_kind"] = by_kind
    return costs


def assemble(
    found: dict[str, Any], cold: dict[str, Any], asset: dict[str, Any], errors: dict[str, str]
) -> dict[str, Any]:
    ours_counts = found.get("ours") or {}
    base_counts = found.get("baseline") or {}
    timing = found.get("timing") or {}
    throughput = found.get("throughput") or {}
    drained = found.get("drain") or {}
    growth = found.get("local_growth") or {}
    event_figures, event_detail = _events(found.get("events"))

    ddb = {name: (ours_counts.get(name) or {}).get("requests") for name in ("send", "replay", "reset", "reset_mail")}
    ddb.update(event_figures)
    ddb["sms_send"] = (ours_counts.get("sms_send") or {}).get("requests")
    baseline_ddb = {name: (base_counts.get(name) or {}).get("requests") for name in ("send", "replay")}
    capacity, read_capacity = _capacity(ours_counts, found.get("events"))
    conservative, _ = _capacity(ours_counts, found.get("events"), "conservative_write_request_units")
    baseline_capacity = {name: (base_counts.get(name) or {}).get("write_request_units") for name in ("send", "replay")}

    cold_ratio = dict(cold.get("ratio") or {})
    costs = _costs(found, timing, throughput)
    results: dict[str, Any] = {
        "ddb_requests": ddb,
        "baseline_ddb_requests": baseline_ddb,
        "ddb_capacity": capacity,
        "ddb_read_capacity": read_capacity,
        "ddb_capacity_cancelled_billed_as_attempted": conservative,
        "baseline_ddb_capacity": baseline_capacity,
        "send_cpu_ratio_vs_baseline": timing.get("lambda_cpu_ratio_of_medians"),
        "send_time_ratio_vs_baseline": timing.get("ratio_of_medians"),
        "send_time_ratio_vs_baseline_over_http": (found.get("timing_http") or {}).get("ratio_of_medians"),
        "cold_start_ratio": {k: cold_ratio.get(k) for k in ("api", "poller", "sms_delivery_logs")},
        "ingest_events_per_second": throughput.get("events_per_second"),
        "ingest_cpu_ms_per_event": throughput.get("cpu_ms_per_event"),
        "ingest_drain_speedup": drained.get("speedup"),
        "local_send_growth": growth.get("ratio"),
        "asset_bytes": asset.get("bytes"),
        "cost_per_million": {key: (costs.get(key) or {}).get("usd") for key in ("email_send", "sms_send", "event")},
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
            "send_time": timing,
            "send_time_over_http": found.get("timing_http") or {},
            "cold_start": cold,
            "ingest_throughput": throughput,
            "ingest_drain": drained,
            "ingest_batching_alternative": found.get("batching") or {},
            "local_send_growth": growth,
            "asset": asset,
            "cost": {**costs, "assumed_latency_ms": cost.ASSUMED_LATENCY_MS, "memory_gb": cost.MEMORY_GB},
        },
    }
    results["bars"] = bars.evaluate(results, _reasons(found, cold, errors))
    return results


def _reasons(found: dict[str, Any], cold: dict[str, Any], errors: dict[str, str]) -> dict[str, str]:
    """Why a bar's figure may be missing, per bar path (or figure group)."""

    def error(name: str) -> str:
        return f"error: {errors.get(name, 'not measured')}"

    reasons = {
        "ddb_requests": error("ddb_requests"),
        "ddb_capacity": error("ddb_requests"),
        "send_cpu_ratio_vs_baseline": error("send_time_ratio"),
        "send_time_ratio_vs_baseline_over_http": error("send_time_over_http"),
        "ingest_cpu_ms_per_event": (found.get("throughput") or {}).get("reason") or error("ingest_events_per_second"),
        "ingest_drain_speedup": (found.get("drain") or {}).get("reason") or error("ingest_drain_speedup"),
        "local_send_growth": (found.get("local_growth") or {}).get("reason") or error("local_send_growth"),
    }
    for name in ("api", "poller", "sms_delivery_logs"):
        module = (cold.get("modules") or {}).get(name) or {}
        reasons[f"cold_start_ratio.{name}"] = str(module.get("reason") or error("cold_start"))
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
