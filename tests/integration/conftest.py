"""Ingestion fixtures: the SES events queue behind its SNS topic, SMS log groups, escalation queue."""

from __future__ import annotations

import contextlib
import copy
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import boto3
import pytest

from local.constants import (
    ESCALATION_QUEUE,
    MAX_RECEIVE_COUNT,
    SES_EVENTS_DLQ,
    SES_EVENTS_QUEUE,
    SES_EVENTS_TOPIC,
    SMS_FAILURE_LOG_GROUP,
    SMS_SUCCESS_LOG_GROUP,
    TEST_OUTCOMES_QUEUE,
)
from local.simulator import Simulator
from sendledger.adapters import aws as aws_clients
from sendledger.bootstrap import Runtime
from sendledger.domain.clock import iso
from sendledger.providers.ses import MESSAGE_ID_TAG as SES_MESSAGE_ID_TAG
from sendledger.providers.ses.settings import SesSettings
from sendledger.providers.sns.settings import SnsSettings
from sendledger.usecases.poll import CycleReport
from tests.support.fixtures import aws_format

SUCCESS_GROUP, FAILURE_GROUP = SMS_SUCCESS_LOG_GROUP, SMS_FAILURE_LOG_GROUP


def fixture(name: str) -> dict[str, Any]:
    return aws_format(name)


SES_FIXTURES = {
    "Send": "ses-send.json",
    "Delivery": "ses-delivery.json",
    "Bounce": "ses-bounce-permanent.json",
    "TransientBounce": "ses-bounce-transient.json",
    "Complaint": "ses-complaint.json",
    "Reject": "ses-reject.json",
    "DeliveryDelay": "ses-delivery-delay.json",
}


def ses_record(
    kind: str,
    message_id: str | None,
    recipient: str,
    at: datetime,
    ses_message_id: str = "0100018c-EXAMPLE-000000",
    feedback_id: str | None = None,
) -> dict[str, Any]:
    """An SES event record in the documented shape, pointed at one of our messages."""
    record = copy.deepcopy(fixture(SES_FIXTURES[kind]))
    mail = record["mail"]
    mail["messageId"] = ses_message_id
    mail["destination"] = [recipient]
    mail["commonHeaders"]["to"] = [recipient]
    mail["timestamp"] = iso(at)
    if message_id is None:
        mail["tags"].pop(SES_MESSAGE_ID_TAG)
    else:
        mail["tags"][SES_MESSAGE_ID_TAG] = [message_id]
    detail_key = record["eventType"][0].lower() + record["eventType"][1:]
    detail = record.get(detail_key, {})
    if "timestamp" in detail:
        detail["timestamp"] = iso(at)
    for list_key in ("bouncedRecipients", "complainedRecipients", "delayedRecipients"):
        for item in detail.get(list_key, []):
            item["emailAddress"] = recipient
    if "recipients" in detail:
        detail["recipients"] = [recipient]
    if feedback_id is not None and "feedbackId" in detail:
        detail["feedbackId"] = feedback_id
    return record


def sms_record(provider_message_id: str, destination: str, status: str, response: str, at: datetime) -> str:
    record = fixture("sns-sms-delivery-success.json" if status == "SUCCESS" else "sns-sms-delivery-failure.json")
    record["notification"] = {"messageId": provider_message_id, "timestamp": at.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]}
    record["delivery"]["destination"] = destination
    record["delivery"]["providerResponse"] = response
    record["status"] = status
    return json.dumps(record)


@dataclass
class Ingestion:
    services: Runtime  # the composition root the api and the poller share
    topic_arn: str
    queue_url: str
    dlq_url: str
    escalation_url: str
    test_outcomes_url: str  # test mode's simulated events (providers/simulated/outlets.py)

    def publish(self, record: dict[str, Any]) -> None:
        """SES → SNS topic → SQS queue (no raw delivery: the SQS body is the SNS envelope)."""
        boto3.client("sns").publish(TopicArn=self.topic_arn, Message=json.dumps(record))

    def enqueue_raw(self, body: str) -> None:
        boto3.client("sqs").send_message(QueueUrl=self.queue_url, MessageBody=body)

    def queue_depth(self) -> int:
        attrs = boto3.client("sqs").get_queue_attributes(
            QueueUrl=self.queue_url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return int(attrs["ApproximateNumberOfMessages"]) + int(attrs["ApproximateNumberOfMessagesNotVisible"])

    def escalations(self) -> list[dict[str, Any]]:
        sqs = boto3.client("sqs")
        bodies = []
        while True:
            got = sqs.receive_message(
                QueueUrl=self.escalation_url, MaxNumberOfMessages=10, MessageAttributeNames=["All"]
            )
            messages = got.get("Messages", [])
            if not messages:
                return bodies
            for message in messages:
                body = json.loads(message["Body"])
                body["_deduplication_id"] = message["MessageAttributes"]["deduplication_id"]["StringValue"]
                bodies.append(body)
                sqs.delete_message(QueueUrl=self.escalation_url, ReceiptHandle=message["ReceiptHandle"])

    def log_sms(self, group: str, message: str, at: datetime) -> None:
        logs = boto3.client("logs")
        stream = "stream-1"
        with contextlib.suppress(logs.exceptions.ResourceAlreadyExistsException):
            logs.create_log_stream(logGroupName=group, logStreamName=stream)
        logs.put_log_events(
            logGroupName=group,
            logStreamName=stream,
            logEvents=[{"timestamp": int(at.timestamp() * 1000), "message": message}],
        )

    def poll(self, seconds_left: float = 300.0) -> CycleReport:
        return self.services.poll_cycle.run(lambda: seconds_left)


@pytest.fixture
def simulator(aws: Any) -> Any:
    """SES and SNS played at the transport edge (local/simulator/), for the real adapters."""
    aws_clients.client.cache_clear()  # clients built after install() see the simulator
    sim = Simulator.install()
    yield sim
    sim.uninstall()
    aws_clients.client.cache_clear()


@pytest.fixture
def ingestion(services: Runtime) -> Ingestion:
    return make_ingestion(services)


def make_ingestion(services: Runtime) -> Ingestion:
    """The SES events queue behind its topic (+DLQ), the escalation queue and the SMS log groups."""
    sqs, sns, logs = boto3.client("sqs"), boto3.client("sns"), boto3.client("logs")
    dlq_url = sqs.create_queue(QueueName=SES_EVENTS_DLQ)["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    # VisibilityTimeout 0: a message received but not deleted (crash, poison) is visible again
    # at once, so a rerun sees it without waiting (moto uses the real clock for visibility).
    queue_url = sqs.create_queue(
        QueueName=SES_EVENTS_QUEUE,
        Attributes={
            "VisibilityTimeout": "0",
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(MAX_RECEIVE_COUNT)}),
        },
    )["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    topic_arn = sns.create_topic(Name=SES_EVENTS_TOPIC)["TopicArn"]
    sns.subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=queue_arn)
    escalation_url = sqs.create_queue(QueueName=ESCALATION_QUEUE)["QueueUrl"]
    test_outcomes_url = sqs.create_queue(QueueName=TEST_OUTCOMES_QUEUE, Attributes={"VisibilityTimeout": "0"})[
        "QueueUrl"
    ]
    for group in (SUCCESS_GROUP, FAILURE_GROUP):
        logs.create_log_group(logGroupName=group)
    settings = services.settings.replace(
        {"escalation_queue_url": escalation_url, "test_outcomes_queue_url": test_outcomes_url}
    )
    settings = settings.configure_provider(SesSettings, events_queue_url=queue_url, events_topic_arn=topic_arn)
    services.settings = settings.configure_provider(
        SnsSettings, success_log_group=SUCCESS_GROUP, failure_log_group=FAILURE_GROUP
    )
    return Ingestion(
        services,
        topic_arn,
        queue_url,
        dlq_url,
        escalation_url,
        test_outcomes_url,
    )
