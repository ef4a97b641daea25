"""What applying events in batches would trade: the SDK's CPU per event against write units.

The poller applies each event with one conditional write (an UpdateItem, or a two-item
TransactWriteItems when the event changes a suppression). Most of the Lambda CPU per applied
event is the SDK's client-side work per request (parameters, endpoint rules, serialisation,
signing, parsing, retry checks), so fewer requests per event would cut it. DynamoDB's one way
to batch conditional writes of independent items is TransactWriteItems, and it bills each item
2 write units per started KB instead of 1; it also fails whole when one condition fails, so a
redelivered event cancels its batch and the rest must be sent again.

Both sides build the product's own request for an SES Delivery event (adapters/dynamodb/events.py,
table.py) and send it through a real client whose answer is canned at botocore's before-send
hook: only the client's work is timed, interleaved, on the calling thread.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from botocore.awsrequest import AWSPreparedRequest, AWSResponse

from benchmarks import cost
from benchmarks.environment import LEDGER_TABLE
from local.simulator.hooks import answer_locally
from tests.support.fixtures import aws_format

BATCH = 10  # events per transaction on the batched side
SAMPLES = 15  # interleaved, per side
REPEATS = 20  # batches per sample
# Per started KB; a Delivery's receipt is under 1 KB (ses:Delivery: 1 WRU in the capacity table).
WRU_PER_ITEM = {"UpdateItem": 1, "TransactWriteItems": 2}


def measure() -> dict[str, Any]:
    from sendledger.adapters.dynamodb import receipts
    from sendledger.adapters.dynamodb.events import DeliveryEvents
    from sendledger.adapters.dynamodb.table import Table, ledger_client
    from sendledger.domain.event_plan import plan_event
    from sendledger.domain.suppression_rules import TransientPolicy, verdict_for
    from sendledger.providers.ses.events import parse_ses_record

    client = ledger_client()  # the poller's own client configuration
    client.meta.events.register("before-send", _canned)
    table = Table(LEDGER_TABLE, client)
    store = DeliveryEvents(table)
    (event,) = parse_ses_record(aws_format("ses-delivery.json"))
    now = datetime.now(UTC)
    updates = []
    for i in range(BATCH):
        message_id = f"msg_01JBATCH{i:017d}"
        mine = replace(event, message_id=message_id)
        plan = plan_event(mine, verdict_for(mine), TransientPolicy(), now, message_id=message_id)
        update = store._target_update(plan, relative=True)
        key = receipts.of_message(message_id)
        updates.append((key.pk, key.sk, update))

    def singles() -> None:
        for pk, sk, update in updates:
            table.update(pk, sk, update)

    def batched() -> None:
        transaction = table.transaction()
        for i, (pk, sk, update) in enumerate(updates):
            transaction.update(f"event{i}", pk, sk, update)
        transaction.commit()

    sides = {"UpdateItem": singles, "TransactWriteItems": batched}
    for run in sides.values():
        for _ in range(REPEATS):
            run()  # warm: first-use caches (endpoint rules, shapes) are not what a warm poller pays
    samples: dict[str, list[float]] = {name: [] for name in sides}
    for i in range(SAMPLES):
        order = list(sides) if i % 2 == 0 else list(reversed(sides))
        for name in order:
            start = time.thread_time()
            for _ in range(REPEATS):
                sides[name]()
            samples[name].append((time.thread_time() - start) * 1000 / (REPEATS * BATCH))
    per_event = {name: round(statistics.median(values), 4) for name, values in samples.items()}
    price = cost.PRICES["dynamodb_write_request_unit_per_million"]
    saved_ms = per_event["UpdateItem"] - per_event["TransactWriteItems"]
    return {
        "method": (
            f"{BATCH} SES Delivery updates as built by the event store, sent as {BATCH} conditional UpdateItems "
            f"or as one TransactWriteItems of {BATCH}; a real client answered with a canned empty body; "
            f"{SAMPLES} interleaved samples of {REPEATS} batches per side, thread CPU time, medians"
        ),
        "client_cpu_ms_per_event": per_event,
        "cpu_ratio_batched_over_single": round(per_event["TransactWriteItems"] / per_event["UpdateItem"], 3),
        "write_units_per_event": dict(WRU_PER_ITEM),
        "dynamodb_usd_per_million_events": {name: wru * price for name, wru in WRU_PER_ITEM.items()},
        # Lambda time the batched side would save, at the poller's memory size (CPU time as duration).
        "lambda_usd_per_million_events_saved": round(cost.lambda_compute_usd_per_million("poller", saved_ms), 4),
    }


def _canned(request: AWSPreparedRequest, **_: Any) -> AWSResponse:
    return answer_locally(request, 200, {"x-amzn-requestid": "benchmark"}, {})
