"""Events applied per second, and Lambda CPU per applied event, by scheduled poll cycles.

Each round starts from fresh tables, sends a batch through the `api` handler (the simulator
plays SES and SNS), then times the scheduled `poller` invocations that drain it (SES queue +
SMS log reconciliation, with the cycle's fixed work: due work, escalations, metrics). The
Lambda's CPU is the process's CPU time over those cycles minus the CPU time its threads spent
inside moto's stubbed sends: the emulation, and the wait for the lock that serializes in-process
moto, which DynamoDB does not impose (benchmarks/timing.EmulatorMeter).

Per applied event, the bar counts what applying the batch added: the cycles' CPU less that of
as many idle cycles (timed just before the batch), over the events applied. The whole cycles'
CPU per event and the idle cycle's CPU are reported beside it: a cycle's fixed work is paid
every poll interval whatever arrives, and dividing it by one batch's size would make the
figure a property of the batch. Informational (no bar): the ingestion bar is a ratio to a
baseline consumer measured without the emulator (benchmarks/ingest_cpu.py).
"""

from __future__ import annotations

import contextlib
import gc
import statistics
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from benchmarks import ours
from benchmarks.aws import World, lambda_context
from benchmarks.environment import ACCOUNT_ID, REGION
from benchmarks.event_feed import EMAIL_OUTCOMES, POLLER, Provider, load
from benchmarks.timing import EmulatorMeter

MAX_CYCLES = 20


def measure(world: World, emails: int, sms: int, rounds: int) -> dict[str, Any]:
    poller, missing = load(POLLER)
    if poller is None:
        return {"reason": missing}
    handler = poller.lambda_handler
    found: list[dict[str, Any]] = [_one_round(world, handler, emails, sms) for _ in range(rounds)]
    whole = [round_["cpu_ms_per_event"] for round_ in found]
    marginal = [round_["marginal_cpu_ms_per_event"] for round_ in found]
    idle = [round_["idle_cycle_cpu_ms"] for round_ in found]
    median_round = found[sorted(range(rounds), key=lambda i: marginal[i])[rounds // 2]]
    per_round_cpu = ("cpu_ms_per_event", "marginal_cpu_ms_per_event", "idle_cycle_cpu_ms")
    typical = {key: value for key, value in median_round.items() if key not in per_round_cpu}
    return {
        **typical,
        "method": (
            f"{rounds} rounds, each: {emails} emails and {sms} SMS sent through the api handler, then the "
            "scheduled poller cycles that drain them (SES events via SNS->SQS, SMS records via FilterLogEvents)"
        ),
        "rounds": rounds,
        "events_per_second": round(statistics.median(r["events_per_second"] for r in found), 2),
        # What applying an event adds to a cycle (against moto, its emulation taken out).
        "cpu_ms_per_event": round(statistics.median(marginal), 3),
        "whole_cycle_cpu_ms_per_event": round(statistics.median(whole), 3),
        "idle_cycle_cpu_ms": round(statistics.median(idle), 3),
        "per_round": {"marginal": marginal, "whole_cycle": whole, "idle_cycle_ms": idle},
        "note": (
            "wall time is dominated by moto: its emulation of a request is far slower than DynamoDB's, and "
            "it slows as the table fills; DynamoDB does not"
        ),
    }


@contextlib.contextmanager
def emulator_heap_frozen() -> Iterator[None]:
    """The objects alive before the window (moto's tables above all) are left out of collections.

    A Lambda's heap holds its own objects only; here the same process holds every table moto
    emulates, and a full collection that a product allocation triggers walks all of it, billed
    to the product. Objects made inside the window are collected as usual.
    """
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _one_round(world: World, handler: Any, emails: int, sms: int) -> dict[str, Any]:
    from local.scheduler import scheduled_event

    def cycle() -> dict[str, Any]:
        event = scheduled_event(now=datetime.now(UTC), region=REGION, account_id=ACCOUNT_ID)
        answer = handler(event, lambda_context("sendledger-poller", 60.0))
        return answer if isinstance(answer, dict) else {}

    # Fresh tables, as the drain measure has: what moto holds (earlier sections' items, the
    # rollback copies it keeps per transaction) is emulator state, not the product's work.
    world.empty_tables()
    world.refresh_watermarks()
    from moto.core.model_instances import reset_model_data

    reset_model_data()
    provider = Provider(world)
    try:
        cycle()  # settle: cursor established, queue empty, earlier records seen
        with emulator_heap_frozen(), EmulatorMeter().installed() as meter:
            start_cpu = time.process_time()
            cycle()  # nothing to apply: the fixed work every cycle does (due work, cursors, metrics)
            idle_cpu = max(time.process_time() - start_cpu - meter.cpu_seconds, 0.0)
        expected = _send_batch(provider, emails, sms)
        applied = duplicates = cycles = 0
        with emulator_heap_frozen(), EmulatorMeter().installed() as meter:
            start, start_cpu = time.perf_counter(), time.process_time()
            while cycles < MAX_CYCLES:
                answer = cycle()
                cycles += 1
                applied += int(answer.get("applied", 0) or 0)
                duplicates += int(answer.get("duplicates", 0) or 0)
                if applied + duplicates >= expected or not (answer.get("applied") or answer.get("duplicates")):
                    break
            elapsed, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        emulated, emulated_cpu = meter.seconds, meter.cpu_seconds
    finally:
        provider.close()
    if not applied:
        raise RuntimeError(f"no event applied of {expected} expected")
    client = max(elapsed - emulated, 1e-9)
    lambda_cpu = max(cpu - emulated_cpu, 0.0)
    marginal = max(lambda_cpu - idle_cpu * cycles, 0.0)
    return {
        "events_expected": expected,
        "events_applied": applied,
        "duplicates_seen": duplicates,
        "cycles": cycles,
        "seconds": round(elapsed, 4),
        "events_per_second": round(applied / elapsed, 2),
        "moto_emulation_seconds": round(emulated, 4),
        "client_seconds": round(client, 4),
        "client_ms_per_event": round(client * 1000 / applied, 3),
        "events_per_second_excluding_moto": round(applied / client, 2),
        "lambda_cpu_seconds": round(lambda_cpu, 4),
        "cpu_ms_per_event": round(lambda_cpu * 1000 / applied, 3),
        "idle_cycle_cpu_ms": round(idle_cpu * 1000, 3),
        "marginal_cpu_ms_per_event": round(marginal * 1000 / applied, 3),
    }


def _send_batch(provider: Provider, emails: int, sms: int) -> int:
    """Send the batch; how many events the simulator published for it."""
    run = uuid.uuid4().hex[:8]
    addresses = list(EMAIL_OUTCOMES.values())
    for i in range(emails):
        local, _, domain = addresses[i % len(addresses)].partition("@")
        status, _, body = ours.post("/v1/messages", ours.email_body(f"{local}+{run}{i}@{domain}"), key=f"tp-{run}-{i}")
        if status != 202:
            raise RuntimeError(f"send failed: {status} {body}")
    for i in range(sms):
        number = f"+1312555{100 + i % 70:04d}"  # +1 312 555-01XX: 00-49 delivered, 50-59 unreachable, 60-69 invalid
        status, _, body = ours.post("/v1/messages", ours.sms_body(number), key=f"tp-sms-{run}-{i}")
        if status != 202:
            raise RuntimeError(f"SMS failed: {status} {body}")
    flushed = provider.simulator.flush()
    return int(flushed.get("ses_events_published", 0)) + int(flushed.get("sms_records_written", 0))
