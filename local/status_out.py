"""Status out, locally: what Lambda's event sources do deployed, against moto.

- the ledger's DynamoDB Stream is read with `dynamodbstreams` (GetShardIterator, GetRecords)
  and handed to the `publisher` handler as the DynamoDB Streams event Lambda would send; a
  record it reports failed is kept, with every record after it, for the next pump (Lambda
  resumes a shard from the failed record the same way);
- two EventBridge rules on the bus feed SQS queues: one is what `GET /local/events` lists, the
  other the callback queue the `callbacks` handler consumes (redrive to its DLQ after
  CALLBACK_MAX_ATTEMPTS receives), with the SQS event source's delete-on-success emulated.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import boto3
from botocore.config import Config

from sendledger import names

LOG = logging.getLogger("sendledger.local.status_out")

EVENTS_QUEUE = "sendledger-local-events"
CALLBACK_QUEUE = "sendledger-callbacks"
CALLBACK_DLQ = "sendledger-callbacks-dlq"
EVENTS_RULE = "sendledger-local-events"
CALLBACK_RULE = "sendledger-callbacks"
STREAM_BATCH_SIZE = 100  # the deployed event source's batch size
CALLBACK_VISIBILITY_SECONDS = 30  # a callback in flight locally (a crash retries it this much later)
# botocore names a stream's endpoint by the account in its ARN; moto answers the regional one.
STREAMS_CONFIG = Config(account_id_endpoint_mode="disabled")

Handler = Callable[[dict[str, Any], Any], Any]
# The event as EventBridge hands it to an SQS target, `account` included: moto's own default
# leaves `account` out, and the callbacks refuse an event without this account's.
_FIELDS = ("id", "time", "detail-type", "source", "account", "region", "resources", "detail")
WHOLE_EVENT = {
    "InputPathsMap": {name: f"$.{name}" for name in _FIELDS},
    "InputTemplate": '{"version": "0", "id": "<id>", "detail-type": "<detail-type>", "source": "<source>", '
    '"account": "<account>", "time": "<time>", "region": "<region>", "resources": <resources>, "detail": <detail>}',
}


@dataclass(frozen=True)
class StatusOutResources:
    bus_name: str
    events_queue_url: str
    callback_queue_url: str
    callback_queue_arn: str
    callback_dlq_url: str
    stream_arn: str


def create_status_out_resources(
    *,
    table_name: str,
    bus_name: str,
    max_attempts: int,
    region: str,
    session: boto3.session.Session | None = None,
    callback_visibility_seconds: int = CALLBACK_VISIBILITY_SECONDS,
) -> StatusOutResources:
    """The bus, its two rules and their queues (the ledger table was created with its stream).

    The rules match what the deployed callback rule matches: this account's sendledger events.
    """
    session = session or boto3.session.Session()
    events, sqs = session.client("events", region_name=region), session.client("sqs", region_name=region)
    account = session.client("sts", region_name=region).get_caller_identity()["Account"]
    events.create_event_bus(Name=bus_name)
    events_url, events_arn = _queue(sqs, EVENTS_QUEUE, {})
    dlq_url, dlq_arn = _queue(sqs, CALLBACK_DLQ, {})
    redrive = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(max_attempts)})
    attributes = {"RedrivePolicy": redrive, "VisibilityTimeout": str(callback_visibility_seconds)}
    callback_url, callback_arn = _queue(sqs, CALLBACK_QUEUE, attributes)
    pattern = json.dumps({"source": [names.EVENT_SOURCE], "account": [account]})
    target = {"Id": "queue", "InputTransformer": WHOLE_EVENT}
    for rule, arn in ((EVENTS_RULE, events_arn), (CALLBACK_RULE, callback_arn)):
        events.put_rule(Name=rule, EventBusName=bus_name, EventPattern=pattern, State="ENABLED")
        events.put_targets(Rule=rule, EventBusName=bus_name, Targets=[{**target, "Arn": arn}])
    stream_arn = session.client("dynamodb", region_name=region).describe_table(TableName=table_name)["Table"][
        "LatestStreamArn"
    ]
    return StatusOutResources(bus_name, events_url, callback_url, callback_arn, dlq_url, str(stream_arn))


def forget_read_records(table_name: str, count: int, region: str) -> None:
    """Drop the oldest `count` records from moto's copy of the stream (in this process).

    DynamoDB keeps stream records 24 hours; moto keeps them for good, and deep-copies the table
    with all of them on every TransactWriteItems (its rollback copy), so an unread-forever stream
    makes every transaction slower and the process bigger as the ledger fills. Sequence numbers
    stay what they were: iterators already handed out go on working.
    """
    from moto.core.models import DEFAULT_ACCOUNT_ID
    from moto.dynamodb.models import dynamodb_backends

    shard = dynamodb_backends[DEFAULT_ACCOUNT_ID][region].get_table(table_name).stream_shard
    if shard is not None and count:
        del shard.items[:count]
        shard.starting_sequence_number += count


class StreamReader:
    """The stream's records in order, in the shape Lambda delivers them, acknowledged explicitly."""

    def __init__(self, stream_arn: str, region: str, client: Any = None, *, forget_read: bool = True) -> None:
        self.stream_arn = stream_arn
        self.region = region
        self.table_name = stream_arn.split(":table/", 1)[1].split("/", 1)[0]
        self.forget_read = forget_read  # moto runs in this process (the local stack, tests)
        self.client = client or boto3.client("dynamodbstreams", region_name=region, config=STREAMS_CONFIG)
        self._iterators: dict[str, str] = {}
        self.pending: list[dict[str, Any]] = []  # read, not yet acknowledged

    def batch(self, limit: int = STREAM_BATCH_SIZE) -> list[dict[str, Any]]:
        if len(self.pending) < limit:
            self._read()
        return self.pending[:limit]

    def acknowledge(self, batch: list[dict[str, Any]], failed_sequence: str | None) -> None:
        """Drop what was handled: the batch, or the records before the first one that failed."""
        done = len(batch)
        if failed_sequence is not None:
            done = next(i for i, r in enumerate(batch) if r["dynamodb"]["SequenceNumber"] == failed_sequence)
        del self.pending[:done]

    def _read(self) -> None:
        shards = self.client.describe_stream(StreamArn=self.stream_arn)["StreamDescription"]["Shards"]
        for shard in shards:
            shard_id = shard["ShardId"]
            if shard_id not in self._iterators:
                self._iterators[shard_id] = self.client.get_shard_iterator(
                    StreamArn=self.stream_arn, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON"
                )["ShardIterator"]
            response = self.client.get_records(ShardIterator=self._iterators[shard_id], Limit=1000)
            self._iterators[shard_id] = response["NextShardIterator"]
            self.pending += [self._lambda_shape(record) for record in response["Records"]]
            if self.forget_read:
                forget_read_records(self.table_name, len(response["Records"]), self.region)

    def _lambda_shape(self, record: dict[str, Any]) -> dict[str, Any]:
        change = dict(record["dynamodb"])
        created = change.get("ApproximateCreationDateTime")
        if isinstance(created, datetime):
            change["ApproximateCreationDateTime"] = int(created.timestamp())
        return {**record, "dynamodb": change, "eventSourceARN": self.stream_arn}


def stream_event(records: list[dict[str, Any]]) -> dict[str, Any]:
    return {"Records": records}


def sqs_record(message: dict[str, Any], queue_arn: str, region: str) -> dict[str, Any]:
    """A received SQS message as the SQS event source hands it to a function."""
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": message.get("Attributes", {}),
        "messageAttributes": {
            name: {"stringValue": given.get("StringValue"), "dataType": given.get("DataType", "String")}
            for name, given in (message.get("MessageAttributes") or {}).items()
        },
        "md5OfBody": message.get("MD5OfBody", ""),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": region,
    }


def first_failure(response: Any) -> str | None:
    """The checkpoint of a partial batch response: Lambda resumes at the lowest sequence number."""
    failures = [str(f["itemIdentifier"]) for f in (response or {}).get("batchItemFailures") or []]
    return min(failures, key=int) if failures else None


@dataclass
class StatusOut:
    """One pump: stream → publisher; bus → the events list; callback queue → callbacks."""

    resources: StatusOutResources
    region: str
    publisher: Handler
    callbacks: Handler | None  # None: not importable, nothing is POSTed
    make_context: Callable[[], Any]
    invoke_lock: threading.RLock = field(default_factory=threading.RLock)
    events: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.stream = StreamReader(self.resources.stream_arn, self.region)
        self.sqs = boto3.client("sqs", region_name=self.region)
        self._lock = threading.Lock()

    def pump(self) -> dict[str, int]:
        with self._lock:
            published = self.publish()
            self.collect_events()
            delivered = self.deliver_callbacks() if self.callbacks is not None else 0
            return {"records": published, "events": len(self.events), "callbacks": delivered}

    def listed(self) -> list[dict[str, Any]]:
        """GET /local/events: everything that reached the bus so far, oldest first."""
        with self._lock:
            return list(self.collect_events())

    def publish(self) -> int:
        handled = 0
        while batch := self.stream.batch():
            with self.invoke_lock:
                response = self.publisher(stream_event(batch), self.make_context())
            failed = first_failure(response)
            self.stream.acknowledge(batch, failed)
            if failed is not None:
                return handled  # the next pump resumes from the failed record
            handled += len(batch)
        return handled

    def collect_events(self) -> list[dict[str, Any]]:
        """What reached the bus, oldest first: `{id, source, detail-type, time, detail}`."""
        while messages := self.sqs.receive_message(
            QueueUrl=self.resources.events_queue_url, MaxNumberOfMessages=10
        ).get("Messages", []):
            for message in messages:
                event = json.loads(message["Body"])
                self.events.append({key: event.get(key) for key in ("id", "source", "detail-type", "time", "detail")})
            self.sqs.delete_message_batch(
                QueueUrl=self.resources.events_queue_url,
                Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)],
            )
        return self.events

    def deliver_callbacks(self) -> int:
        assert self.callbacks is not None
        delivered = 0
        while messages := self.sqs.receive_message(
            QueueUrl=self.resources.callback_queue_url,
            MaxNumberOfMessages=10,
            MessageSystemAttributeNames=["All"],
            MessageAttributeNames=["All"],
        ).get("Messages", []):
            event = {"Records": [sqs_record(m, self.resources.callback_queue_arn, self.region) for m in messages]}
            with self.invoke_lock:
                response = self.callbacks(event, self.make_context())
            failed = {f["itemIdentifier"] for f in (response or {}).get("batchItemFailures", [])}
            done = [m for m in messages if m["MessageId"] not in failed]
            if done:
                self.sqs.delete_message_batch(
                    QueueUrl=self.resources.callback_queue_url,
                    Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)],
                )
            delivered += len(done)
        return delivered


def _queue(sqs: Any, name: str, attributes: dict[str, str]) -> tuple[str, str]:
    url: str = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    arn: str = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn
