"""Every AWS resource the local stack needs, created against whatever endpoint boto3 targets.

Used by ``python -m local`` (against the embedded moto server) and by tests under moto's
in-process ``mock_aws``. Names mirror the deployed stack.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import asdict, dataclass
from typing import Any

import boto3
import boto3.session

from local.constants import (
    ACCOUNT_ID,
    CONFIGURATION_SET,
    ESCALATION_DLQ,
    ESCALATION_QUEUE,
    LEDGER_TABLE,
    MAX_RECEIVE_COUNT,
    REGION,
    SENDER_EMAIL,
    SES_EVENTS_DLQ,
    SES_EVENTS_QUEUE,
    SES_EVENTS_TOPIC,
    TEST_OUTCOMES_DLQ,
    TEST_OUTCOMES_QUEUE,
    sms_log_groups,
)
from sendledger import names
from sendledger.adapters.dynamodb.schema import create_ledger_table
from sendledger.providers.ses import settings as ses
from sendledger.providers.sns import settings as sns


@dataclass(frozen=True)
class Resources:
    region: str
    account_id: str
    ledger_table: str
    sender_email: str
    configuration_set: str
    ses_events_topic_arn: str
    ses_events_queue_url: str
    ses_events_dlq_url: str
    escalation_queue_url: str
    escalation_dlq_url: str
    test_outcomes_queue_url: str
    test_outcomes_dlq_url: str
    sms_success_log_group: str
    sms_failure_log_group: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)

    def simulator_targets(self) -> dict[str, str]:
        """Where a simulator (`Simulator.install(**...)`) writes these resources' provider events."""
        return {
            "region": self.region,
            "account_id": self.account_id,
            "ses_topic_arn": self.ses_events_topic_arn,
            "default_configuration_set": self.configuration_set,
            "sms_success_log_group": self.sms_success_log_group,
            "sms_failure_log_group": self.sms_failure_log_group,
        }

    def handler_environment(self) -> dict[str, str]:
        """The environment variables the Lambda handlers read for these resources."""
        return {
            names.ENV_LEDGER_TABLE: self.ledger_table,
            names.ENV_SENDER_EMAIL: self.sender_email,
            ses.ENV_CONFIGURATION_SET: self.configuration_set,
            ses.ENV_EVENTS_QUEUE_URL: self.ses_events_queue_url,
            names.ENV_ESCALATION_QUEUE_URL: self.escalation_queue_url,
            names.ENV_TEST_OUTCOMES_QUEUE_URL: self.test_outcomes_queue_url,
            ses.ENV_EVENTS_TOPIC_ARN: self.ses_events_topic_arn,
            sns.ENV_SUCCESS_LOG_GROUP: self.sms_success_log_group,
            sns.ENV_FAILURE_LOG_GROUP: self.sms_failure_log_group,
        }


def create_resources(
    *,
    ledger_table: str = LEDGER_TABLE,
    sender_email: str = SENDER_EMAIL,
    configuration_set: str = CONFIGURATION_SET,
    region: str = REGION,
    account_id: str = ACCOUNT_ID,
    session: boto3.session.Session | None = None,
    with_stream: bool = True,
) -> Resources:
    """Create table, SES identity + configuration set, topic → queue (+DLQs), log groups.

    `with_stream=False` (benchmarks, with no publisher reading it): moto deep-copies a table with
    its whole stream on every transaction, a cost DynamoDB's own write path does not have.
    """
    session = session or boto3.session.Session()

    def client(service: str) -> Any:
        return session.client(service, region_name=region)

    create_ledger_table(client("dynamodb"), ledger_table, with_stream=with_stream)

    sesv2 = client("sesv2")
    sesv2.create_configuration_set(ConfigurationSetName=configuration_set)
    domain = sender_email.rpartition("@")[2]
    for identity in (domain, sender_email):
        sesv2.create_email_identity(EmailIdentity=identity, ConfigurationSetName=configuration_set)

    sqs = client("sqs")
    (ses_queue_url, ses_queue_arn), ses_dlq_url = _queue_with_dlq(
        sqs, SES_EVENTS_QUEUE, SES_EVENTS_DLQ, {"VisibilityTimeout": "60"}
    )
    (esc_queue_url, _), esc_dlq_url = _queue_with_dlq(sqs, ESCALATION_QUEUE, ESCALATION_DLQ, {})
    (outcomes_queue_url, _), outcomes_dlq_url = _queue_with_dlq(
        sqs, TEST_OUTCOMES_QUEUE, TEST_OUTCOMES_DLQ, {"VisibilityTimeout": "60"}
    )

    sns = client("sns")
    topic_arn: str = sns.create_topic(Name=SES_EVENTS_TOPIC)["TopicArn"]
    # No RawMessageDelivery: SQS bodies are the SNS JSON envelope, as deployed.
    sns.subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=ses_queue_arn)

    logs = client("logs")
    success_group, failure_group = sms_log_groups(region, account_id)
    for group in (success_group, failure_group):
        with contextlib.suppress(logs.exceptions.ResourceAlreadyExistsException):
            logs.create_log_group(logGroupName=group)

    return Resources(
        region=region,
        account_id=account_id,
        ledger_table=ledger_table,
        sender_email=sender_email,
        configuration_set=configuration_set,
        ses_events_topic_arn=topic_arn,
        ses_events_queue_url=ses_queue_url,
        ses_events_dlq_url=ses_dlq_url,
        escalation_queue_url=esc_queue_url,
        escalation_dlq_url=esc_dlq_url,
        test_outcomes_queue_url=outcomes_queue_url,
        test_outcomes_dlq_url=outcomes_dlq_url,
        sms_success_log_group=success_group,
        sms_failure_log_group=failure_group,
    )


def _queue_with_dlq(sqs: Any, name: str, dlq_name: str, attributes: dict[str, str]) -> tuple[tuple[str, str], str]:
    """A queue whose redrive policy moves a message to its DLQ after MAX_RECEIVE_COUNT receives:
    ((its URL, its ARN), the DLQ's URL)."""
    dlq_url, dlq_arn = _queue(sqs, dlq_name, {})
    redrive = {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(MAX_RECEIVE_COUNT)}
    return _queue(sqs, name, {**attributes, "RedrivePolicy": json.dumps(redrive)}), dlq_url


def _queue(sqs: Any, name: str, attributes: dict[str, str]) -> tuple[str, str]:
    url: str = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    arn: str = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn
