"""The traffic model played through the real handlers: what every request costs, per operation.

Each api container of the model is its own composition root (``bootstrap.build_runtime()``,
passed to the handler as ``runtime=``, as the local stack does), so each has its own clients
and its own per-container caches, warm or cold as a deployed container's would be. Time is the
model's: every runtime's clock reads the time of the request in hand, and the source watermarks
are those a poller draining every ``POLL_INTERVAL_SECONDS`` would have left at that time.

Per counted request: DynamoDB requests and capacity billed as DynamoDB bills them
(benchmarks/capacity.py), and the partition keys it touched (benchmarks/partitions.py); then the
slice's delivery events (benchmarks/traffic_events.py), and the figures summarised
(benchmarks/traffic_figures.py).

Every fourth send of the slice is timed instead of counted (the counting hooks do work of
their own on the calling thread): its Lambda CPU (process CPU time minus the calling thread's
time inside moto's stubbed send, benchmarks/timing.EmulatorMeter) beside that of the baseline
(benchmarks/baseline.py) handling the same request right before or after it.
"""

from __future__ import annotations

import gc
import json
import math
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

import boto3

from benchmarks import traffic_events
from benchmarks.aws import World, _Discard, api_event, lambda_context, reset_caches, status_of
from benchmarks.counting import RequestLog, counting
from benchmarks.environment import ACCOUNT_ID, REGION
from benchmarks.stream import receipt_writer, stream_records
from benchmarks.traffic_figures import CpuSample, Figure, cpu_summary, figure_of, summarise
from benchmarks.traffic_model import Kind, Request, Slice, TrafficModel, build

POLL_INTERVAL = timedelta(seconds=60)  # deployed POLL_INTERVAL_SECONDS
DRAIN_SECONDS = 5  # a cycle drains its queue within this (the watermark is its start)
STALE_WINDOW = timedelta(seconds=900) + POLL_INTERVAL  # UNKNOWN_GRACE_SECONDS + watermark lag, at most
TIMED_EVERY = 4  # every fourth send is timed against the baseline, not counted


class ModelClock:
    """The services' clock: the time of the request being played."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def now(self) -> datetime:
        return self.at


def principal(caller: str) -> str:
    return f"arn:aws:iam::{ACCOUNT_ID}:user/{caller}"


def watermark_at(at: datetime) -> datetime:
    """The start of the last poll cycle that drained the sources before `at`."""
    since = (at - timedelta(seconds=DRAIN_SECONDS)).timestamp()
    step = POLL_INTERVAL.total_seconds()
    return datetime.fromtimestamp(math.floor(since / step) * step, tz=at.tzinfo)


def measure(world: World, model: TrafficModel | None = None) -> dict[str, Any]:
    from benchmarks import baseline
    from benchmarks.event_feed import Provider
    from benchmarks.timing import EmulatorMeter

    model = model or TrafficModel()
    played = build(model)
    clock = ModelClock(played.start)
    provider = Provider(world)  # before the runtimes: their SES/SNS clients see the simulator
    provider.simulator.clock = clock.now
    cpu: list[CpuSample] = []
    try:
        with EmulatorMeter().installed() as meter:
            player = _Player(world, played, clock, baseline.make_handler(), meter, cpu, provider.simulator.outbox)
            figures = player.play()
            found, fan_out = traffic_events.apply_sampled(played, provider, player.history, player.baseline_sends)
            figures += found
    finally:
        provider.close()
    summary = summarise(played, figures)
    summary["traffic"]["send"]["template_reads_per_send"] = player.template_reads_per_send()
    return {**summary, "cpu": cpu_summary(cpu, TIMED_EVERY), "fan_out": fan_out}


def _runtimes(count: int, clock: ModelClock) -> list[Any]:
    from sendledger import bootstrap

    found = []
    for _ in range(count):
        found.append(bootstrap.build_runtime(clock=clock))
    return found


class _Player:
    def __init__(
        self,
        world: World,
        played: Slice,
        clock: ModelClock,
        baseline: Any,
        meter: Any,
        cpu: list[CpuSample],
        outbox: Callable[[], list[dict[str, Any]]],
    ) -> None:
        self.played, self.clock, self.baseline, self.meter, self.cpu = played, clock, baseline, meter, cpu
        self.outbox = outbox
        # The provider message ids of the baseline's sends: their events are not our traffic's.
        self.baseline_sends: set[str] = set()
        model = played.model
        self.containers = _runtimes(model.api_containers, clock)
        # Sends long before the slice ran on containers long gone: a runtime of their own.
        self.history = _runtimes(1, clock)[0]
        self.ledgers = [runtime.messages for runtime in (*self.containers, self.history)]
        self.watermarks = _Watermarks(world)
        self.labels = _labels(world)
        self.receipts = receipt_writer(world)
        # A send's reads of a caller's template version (usecases/template_catalog.py): one GetItem
        # per container, caller and version the first time, then once per TEMPLATE_CACHE_SECONDS.
        self.template_reads: int = 0
        self.counted_sends: int = 0

    def template_reads_per_send(self) -> float:
        return round(self.template_reads / self.counted_sends, 4) if self.counted_sends else 0.0

    def play(self) -> list[Figure]:
        from sendledger.handlers import api

        played = self.played
        recent = played.start - timedelta(minutes=10)
        figures: list[Figure] = []
        warmed, sends = False, 0
        gc.freeze()  # the emulator's heap is not the Lambda's: collections walk only what is new
        for request in played.requests:
            if not warmed and request.at >= played.start:
                warmed = True  # busy containers: each one served a request just before the slice
                callers = sorted({r.caller for r in played.requests}, key=lambda c: (c != "busy", c))
                used = sorted({_template_of(r) for r in played.requests if r.kind is not Kind.RESET})
                ages = random.Random(played.model.seed)
                for runtime in self.containers:
                    _warm_templates(runtime, played.start, self.clock, callers, used, ages)
                    _warm(runtime, played.start - timedelta(milliseconds=50), self.clock, self.watermarks, callers)
            self.clock.at = request.at
            self.watermarks.at(request.at)
            runtime = self.containers[request.container] if request.at >= recent else self.history
            event = _event(request)
            if request.counted and request.kind is Kind.SEND:
                sends += 1
                if sends % TIMED_EVERY == 0:
                    self._timed(request, event, runtime, sends)
                    continue
            if not request.counted:
                with counting(*self.ledgers) as log:
                    status, body = _call(api.lambda_handler, event, runtime)
                _expect(status in (202, 409), request, status, body)
                self._receipts_uncounted(log)  # the publisher wrote them when that send was made
                continue
            logged, reads = _Discard.written, runtime.catalog.reads
            with counting(*self.ledgers) as log:
                status, body = _call(api.lambda_handler, event, runtime)
            logged = _Discard.written - logged
            if request.kind is Kind.SEND:
                self.counted_sends += 1
                self.template_reads += runtime.catalog.reads - reads
            _expect(status in (200, 202), request, status, body)
            for operation in _operations(request):
                figure = figure_of(operation, log, status, _detail(request, body))
                figure.log_bytes, figure.channel = logged, request.body.get("channel")
                figures.append(figure)
            figures += self._labels(log)
        gc.unfreeze()
        self.clock.at = played.end + timedelta(minutes=5)  # every event of the slice's sends is due
        self.watermarks.at(self.clock.at)
        return figures

    def _labels(self, log: RequestLog) -> list[Figure]:
        """The publisher's writes for the stream records this request's writes produced, off the
        API path: an `allow` send's eligibility label, an accepted SMS's receipt (the table has
        no stream here: its records are the logged items before and after each write, as
        NEW_AND_OLD_IMAGES)."""
        from sendledger.usecases.publish import label_recorded_send, write_sms_receipt

        found = []
        for record in stream_records(log):
            with counting(*self.ledgers) as labelling:
                labelled = label_recorded_send(record, self.labels)
            if labelled:
                found.append(figure_of("send_label", labelling))
            with counting(*self.ledgers) as receipting:
                written = write_sms_receipt(record, self.receipts)
            if written:
                found.append(figure_of("sms_receipt", receipting))
        return found

    def _receipts_uncounted(self, log: RequestLog) -> None:
        from sendledger.usecases.publish import write_sms_receipt

        for record in stream_records(log):
            write_sms_receipt(record, self.receipts)

    def _timed(self, request: Request, event: dict[str, Any], runtime: Any, index: int) -> None:
        """Ours and the baseline on the same request, alternating which goes first."""
        from sendledger.handlers import api

        headers = {"Idempotency-Key": request.key or str(request.body.get("event_id"))}
        theirs = api_event("POST", "/v1/messages", request.body, headers, principal(request.caller))

        answered: list[dict[str, Any]] = []

        def ours() -> tuple[int, dict[str, Any]]:
            status, body = _call(api.lambda_handler, event, runtime)
            answered.append(body)
            return status, body

        def baseline() -> tuple[int, dict[str, Any]]:
            return status_of(self.baseline(theirs, lambda_context("baseline-send")))

        spent: dict[str, float] = {}
        for side in ("ours", "baseline") if index % 2 else ("baseline", "ours"):
            sent = len(self.outbox())  # read outside the timed call
            spent[side] = self._cpu(ours if side == "ours" else baseline, request)
            if side == "baseline":
                self.baseline_sends.update(str(entry["provider_message_id"]) for entry in self.outbox()[sent:])
        self.cpu.append(CpuSample(spent["ours"], spent["baseline"]))
        self._receipt_of_timed(answered[0], request)

    def _receipt_of_timed(self, view: dict[str, Any], request: Request) -> None:
        """The publisher's receipt for a timed SMS send (not counted, as the send is not): its
        status record finds it as every other send's does."""
        from sendledger.ports.status_out import AcceptedSms

        if view.get("channel") == "sms" and view.get("provider_message_id"):
            escalates = bool(request.body.get("escalation"))
            self.receipts.write(AcceptedSms(view["message_id"], view["provider_message_id"], escalates))

    def _cpu(self, call: Callable[[], tuple[int, dict[str, Any]]], request: Request) -> float:
        emulated = self.meter.cpu_seconds
        start = time.process_time()
        status, body = call()
        spent = time.process_time() - start - (self.meter.cpu_seconds - emulated)
        _expect(status == 202, request, status, body)
        return spent * 1000


def _labels(world: World) -> Any:
    from sendledger.adapters.dynamodb.labels import StalenessLabels
    from sendledger.adapters.dynamodb.table import Table

    return StalenessLabels(Table(world.resources.ledger_table))


def _warm(runtime: Any, at: datetime, clock: ModelClock, watermarks: _Watermarks, callers: list[str]) -> None:
    """What a busy container holds: every caller's settings and both sources' watermarks read
    within their cache's age (each caller mails through each container every few seconds)."""
    from sendledger.handlers import api

    clock.at = at
    watermarks.at(at)
    warm = [("sms", "+12065550100", callers[0])] + [("email", f"{caller}@example.com", caller) for caller in callers]
    for channel, to, caller in warm:
        body = {"channel": channel, "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": "w"}}
        key = {"Idempotency-Key": f"warm-{id(runtime)}-{channel}-{caller}"}
        _call(api.lambda_handler, api_event("POST", "/v1/messages", body, key, principal(caller)), runtime)


def _template_of(request: Request) -> tuple[str, str]:
    template = request.body["template"]
    return str(template["id"]), str(template["version"])


def _warm_templates(
    runtime: Any,
    start: datetime,
    clock: ModelClock,
    callers: list[str],
    used: list[tuple[str, str]],
    ages: random.Random,
) -> None:
    """What a busy container holds of its callers' templates (usecases/template_catalog.py): each
    version of the mix, and each caller's reset mail, read at a moment drawn uniformly within
    TEMPLATE_CACHE_SECONDS before the slice (the steady state: each entry is read again once it
    is that old, so the slice meets the share of those re-reads that falls inside it)."""
    from sendledger.domain.callers import caller_of

    settings, catalog = runtime.settings, runtime.catalog
    period = settings.template_cache_seconds
    for caller in callers:
        owner = caller_of(principal(caller), settings.caller_tenants).id
        for template_id, version in used:
            clock.at = start - timedelta(seconds=ages.uniform(0, period))
            catalog.for_send(owner, template_id, version)
        clock.at = start - timedelta(seconds=ages.uniform(0, period))
        catalog.reset_version(owner)


def _operations(request: Request) -> list[str]:
    if request.kind is Kind.SEND:
        repeat = request.since_previous_seconds is not None
        return ["send", "send_repeat_recipient"] if repeat else ["send"]
    return [request.kind.value]


def _detail(request: Request, body: dict[str, Any]) -> dict[str, Any]:
    since = request.since_previous_seconds
    return {
        "history": request.history.value if request.history else None,
        "in_stale_window": since is not None and since <= STALE_WINDOW.total_seconds(),
        "state": body.get("state"),
        "params_chars": sum(len(str(v)) for v in (request.body.get("params") or {}).values()),
    }


def _event(request: Request) -> dict[str, Any]:
    path = "/v1/password-resets" if request.kind is Kind.RESET else "/v1/messages"
    headers = {"Idempotency-Key": request.key} if request.key else {}
    return api_event("POST", path, request.body, headers, principal(request.caller))


def _call(handler: Callable[..., Any], event: dict[str, Any], runtime: Any) -> tuple[int, dict[str, Any]]:
    return status_of(handler(event, lambda_context("sendledger-api"), runtime=runtime))


def _expect(ok: bool, request: Request, status: int, body: Any = None) -> None:
    if not ok:
        raise RuntimeError(f"{request.kind.value} at {request.at.isoformat()} answered {status}: {body}")


class _Watermarks:
    """Both sources' watermarks as the poller leaves them (written outside any counted window)."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.client = boto3.client("dynamodb", region_name=REGION)
        self.current: datetime | None = None

    def at(self, at: datetime) -> None:
        from sendledger.domain.clock import iso

        mark = watermark_at(at)
        if mark == self.current:
            return
        self.current = mark
        for source in ("ses", "sms"):
            item = {"pk": f"WM#{source}", "sk": "WM", "watermark": iso(mark), "updated_at": iso(mark)}
            self.client.put_item(
                TableName=self.world.resources.ledger_table, Item={k: {"S": v} for k, v in item.items()}
            )


@contextmanager
def fresh(world: World) -> Iterator[World]:
    """Empty tables and rebuilt caches around a traffic run (its own slice of the ledger)."""
    world.empty_tables()
    reset_caches()
    try:
        yield world
    finally:
        reset_caches()


def to_json(result: dict[str, Any]) -> str:
    return json.dumps(result, indent=2, default=str)
