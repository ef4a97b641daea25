"""The delivery events of a traffic slice's sends, applied as a deployment receives them.

Only the slice's own sends' events count (the baseline's sends go through the same simulator,
and no deployment of ours would see those). A seeded sample goes through the poller (SQS
record, push mode) and the SMS handler in the order the provider emitted them, once new and
once again, so a duplicate's cost is measured beside the first delivery's.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any, TypeVar

from benchmarks.aws import lambda_context
from benchmarks.counting import counting
from benchmarks.environment import ACCOUNT_ID, REGION
from benchmarks.traffic_figures import Figure, figure_of
from benchmarks.traffic_model import Slice

T = TypeVar("T")


def apply_sampled(
    played: Slice, provider: Any, runtime: Any, baseline_sends: set[str]
) -> tuple[list[Figure], dict[str, Any]]:
    """The figures of the sampled events (each applied new, then as a duplicate), and the fan-out:
    how many events and status events each accepted send produced."""
    from benchmarks.event_feed import drain_queue, event_type, sms_status, sqs_event
    from sendledger.handlers import poller, sms_delivery_logs
    from sendledger.providers.ses.settings import SesSettings

    rng = random.Random(played.model.seed + 1)
    outbox = [entry for entry in provider.simulator.outbox() if entry["provider_message_id"] not in baseline_sends]
    accepted = Counter(str(entry.get("channel")) for entry in outbox)
    sms_events: list[dict[str, Any]] = []
    provider.simulator.flush(deliver_sms=sms_events.append)
    queue_url = runtime.settings.provider(SesSettings).events_queue_url
    queue_arn = f"arn:aws:sqs:{REGION}:{ACCOUNT_ID}:{queue_url.rsplit('/', 1)[-1]}"
    ses_messages = [m for m in drain_queue(queue_url) if ses_provider_id(m) not in baseline_sends]
    sms_events = [e for e in sms_events if sms_provider_id(e) not in baseline_sends]
    total = len(ses_messages) + len(sms_events)
    if not total:
        raise RuntimeError("the simulator produced no delivery events for the slice")
    share = min(1.0, played.model.events_sampled / total)
    ledgers = [runtime.messages]
    figures: list[Figure] = []
    for message in in_arrival_order(rng, ses_messages, round(len(ses_messages) * share)):
        event = sqs_event(message, queue_arn)
        kind = f"ses:{event_type(message['Body'])}"
        for operation in ("event_new", "event_duplicate"):
            with counting(*ledgers) as log:
                answer = poller.lambda_handler(event, lambda_context("sendledger-poller", 60.0), runtime=runtime)
            if answer.get("batchItemFailures"):
                raise RuntimeError(f"{kind} not applied: {answer}")
            figures.append(figure_of(operation, log, detail={"event": kind}))
    for event in in_arrival_order(rng, sms_events, round(len(sms_events) * share)):
        kind = f"sms:{sms_status(event)}"
        for operation in ("event_new", "event_duplicate"):
            with counting(*ledgers) as log:
                sms_delivery_logs.lambda_handler(event, lambda_context("sendledger-sms-delivery-logs"), runtime=runtime)
            figures.append(figure_of(operation, log, detail={"event": kind}))
    kinds = Counter(event_type(message["Body"]) for message in ses_messages)
    fan_out = {
        "accepted_by_provider": dict(accepted),
        "ses_events": dict(kinds),
        "sms_status_records": len(sms_events),
        "events_per_send": {
            "email": round(len(ses_messages) / max(accepted.get("email", 0), 1), 3),
            "sms": round(len(sms_events) / max(accepted.get("sms", 0), 1), 3),
        },
        # Status events a send publishes: its intent, its outcome, and each event that moves its state.
        "status_events_per_send": {
            "email": round(2 + sum(n for k, n in kinds.items() if k != "Send") / max(accepted.get("email", 0), 1), 3),
            "sms": round(2 + len(sms_events) / max(accepted.get("sms", 0), 1), 3),
        },
    }
    return figures, fan_out


def in_arrival_order(rng: random.Random, arrived: list[T], k: int) -> list[T]:
    """A seeded sample of `k`, kept in the order the events arrived (as the poller and the SMS
    handler see them: a message's Send before its Delivery), not the sampler's shuffled order."""
    return [arrived[index] for index in sorted(rng.sample(range(len(arrived)), k=k))]


def ses_provider_id(message: dict[str, Any]) -> str:
    return str(json.loads(json.loads(message["Body"])["Message"])["mail"]["messageId"])


def sms_provider_id(event: dict[str, Any]) -> str:
    from local.simulator import decode_subscription_event

    return str(json.loads(decode_subscription_event(event)["logEvents"][0]["message"])["notification"]["messageId"])
