"""SQS queues with the house defaults: SSL only, SQS-managed SSE, DLQ with redrive."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra import constants as c
from infra import nag


def dead_letter_queue(scope: Construct, construct_id: str) -> sqs.Queue:
    dlq = sqs.Queue(
        scope,
        construct_id,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        retention_period=cdk.Duration.days(c.QUEUE_RETENTION_DAYS),
    )
    nag.acknowledge(
        dlq,
        "AwsSolutions-SQS3",
        "This queue is itself a dead-letter queue (redrive target, Lambda async DLQ or "
        "EventBridge target DLQ); its depth is alarmed instead of redriving it further.",
    )
    return dlq


def queue_with_dlq(
    scope: Construct,
    construct_id: str,
    *,
    visibility_timeout: cdk.Duration,
    max_receive_count: int = c.DLQ_MAX_RECEIVE_COUNT,
) -> tuple[sqs.Queue, sqs.Queue]:
    dlq = dead_letter_queue(scope, f"{construct_id}Dlq")
    queue = sqs.Queue(
        scope,
        construct_id,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        retention_period=cdk.Duration.days(c.QUEUE_RETENTION_DAYS),
        visibility_timeout=visibility_timeout,
        dead_letter_queue=sqs.DeadLetterQueue(queue=dlq, max_receive_count=max_receive_count),
    )
    return queue, dlq
