"""The daily SMS cap's overshoot: a caller capped at 1,000 segments sending at its full rate.

The real send path (usecases/send.py's sender with the api's DailyCap, one per container) and the real
publisher (the ledger's stream read as status events, publish_record, the day item's ADD) over
moto, on a simulated clock: the caller sends one 1-segment SMS every 1/rate s, spread round-robin
over CONTAINERS api containers; the publisher handles each stream record STREAM_LAG_SECONDS after
its commit. The caller's full rate is what the deployed API lets one caller send: its stage
throttle (`api_rate_limit`, 50 requests a second). Figures: the segments accepted beyond the cap
(`sms_cap_overshoot_segments`) and the bar of that run (`sms_cap_overshoot_bar_segments`: 2 % of
the cap or the segments of 5 s of the caller's traffic, whichever is larger).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from infra.settings import Settings as DeploySettings

CAP = 1_000
# One caller's ceiling through the deployed API: the stage's steady throttle (api_rate_limit).
RATE_PER_SECOND: int = DeploySettings.default("api_rate_limit")
CONTAINERS = 4  # api containers serving the caller at once (each its own DailyCap)
STREAM_LAG_SECONDS = 1.0  # commit -> the publisher's write, a DynamoDB Stream's usual latency
BAR_SHARE, BAR_SECONDS = 0.02, 5
READ_EVERY = 5  # sends between two reads of the stream (moto's stream reads dominate the run)
TABLE = "sendledger-bench-sms-cap"


def measure(_root: Path, cap: int = CAP) -> dict[str, Any]:
    import boto3
    from moto import mock_aws

    from benchmarks.environment import REGION
    from local.status_out import STREAMS_CONFIG
    from sendledger.adapters.dynamodb.labels import StalenessLabels
    from sendledger.adapters.dynamodb.ledger import LedgerTable
    from sendledger.adapters.dynamodb.schema import create_ledger_table
    from sendledger.adapters.dynamodb.sms_receipts import SmsReceiptItems
    from sendledger.adapters.dynamodb.stream import LedgerStream
    from sendledger.bootstrap import Runtime
    from sendledger.domain.callers import caller_of
    from sendledger.domain.clock import Clock
    from sendledger.domain.messages import Template
    from sendledger.domain.recipients import Channel
    from sendledger.providers.sns.sender import SnsSmsSender
    from sendledger.settings import Settings
    from sendledger.usecases.publish import PublishReport, publish_record
    from sendledger.usecases.results import Accepted, SmsRefused
    from sendledger.usecases.send_command import SendCommand

    class SimulatedClock(Clock):
        def __init__(self) -> None:
            self.current = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)

        def now(self) -> datetime:
            return self.current

    class Bus:
        def put(self, events: Any) -> None:  # the events themselves are another benchmark's
            return None

    caller = caller_of("arn:aws:iam::123456789012:role/sms-capped", {}).id
    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION)
        create_ledger_table(client, TABLE)
        clock = SimulatedClock()
        ledger = LedgerTable.named(TABLE, clock, client)
        stored = ledger.caller_settings.get(caller)
        ledger.caller_settings.put(replace(stored, sms_daily_segments=cap))
        settings = Settings(table_name=TABLE)
        # Each api container its own runtime over the one table, and so its own DailyCap.
        containers = [
            Runtime.over(ledger, email=None, sms=SnsSmsSender(), clock=clock, settings=settings)  # SMS only
            for _ in range(CONTAINERS)
        ]
        stream_arn = client.describe_table(TableName=TABLE)["Table"]["LatestStreamArn"]
        reader = _Reader(boto3.client("dynamodbstreams", region_name=REGION, config=STREAMS_CONFIG), stream_arn)
        changes, bus, labels = LedgerStream(ledger.table), Bus(), StalenessLabels(ledger.table)
        receipts = SmsReceiptItems(ledger.table)
        pending: list[tuple[datetime, dict[str, Any]]] = []
        accepted = refused = 0
        first_refused_at: int | None = None
        step = timedelta(seconds=1 / RATE_PER_SECOND)
        # Until the caller has been refused for a whole stream lag: the overshoot is final then.
        for number in itertools.count():
            container = containers[number % CONTAINERS]
            command = SendCommand(
                channel=Channel.SMS,
                to="+447400123456",
                template=Template("alert", "1"),
                params={"summary": f"disk {number}"},
                category="alert",
                caller=caller,
                idempotency_header=f"bench-{number}",
            )
            result = container.sender.send(command, lambda: 30.0)
            if isinstance(result, Accepted):
                accepted += 1
            elif isinstance(result, SmsRefused):
                refused += 1
                first_refused_at = number if first_refused_at is None else first_refused_at
            if number % READ_EVERY == 0:  # a record's commit is taken as its read: up to 0.1 s late
                pending += [(clock.now(), record) for record in reader.records()]
            report = PublishReport()
            while pending and pending[0][0] <= clock.now() - timedelta(seconds=STREAM_LAG_SECONDS):
                publish_record(pending.pop(0)[1], changes, bus, report, labels, receipts)
            if report.sms_segments:
                ledger.sms_usage.add(report.sms_segments)
            clock.current += step
            if first_refused_at is not None and number - first_refused_at > 2 * STREAM_LAG_SECONDS * RATE_PER_SECOND:
                break
        counted = ledger.sms_usage.segments_on(caller, clock.now().strftime("%Y-%m-%d"))
    bar = max(BAR_SHARE * cap, BAR_SECONDS * RATE_PER_SECOND)  # every SMS here is one segment
    return {
        "overshoot_segments": accepted - cap if accepted > cap else 0,
        "bar_segments": bar,
        "cap": cap,
        "rate_segments_per_second": RATE_PER_SECOND,
        "containers": CONTAINERS,
        "stream_lag_seconds": STREAM_LAG_SECONDS,
        "accepted": accepted,
        "refused": refused,
        "counted_by_publisher": counted,
    }


class _Reader:
    """The stream's records not read yet, oldest first: each read starts after the last record
    seen (in-process moto's next-iterators do not survive records appended after them)."""

    def __init__(self, client: Any, stream_arn: str) -> None:
        self.client, self.stream_arn = client, stream_arn
        self.last: dict[str, str] = {}  # shard -> the last sequence number read

    def records(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for shard in self.client.describe_stream(StreamArn=self.stream_arn)["StreamDescription"]["Shards"]:
            shard_id = shard["ShardId"]
            where: dict[str, Any] = {"ShardIteratorType": "TRIM_HORIZON"}
            if shard_id in self.last:
                where = {"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": self.last[shard_id]}
            iterator = self.client.get_shard_iterator(StreamArn=self.stream_arn, ShardId=shard_id, **where)
            page = self.client.get_records(ShardIterator=iterator["ShardIterator"], Limit=1000)["Records"]
            if page:
                self.last[shard_id] = page[-1]["dynamodb"]["SequenceNumber"]
            found += page
        return found
