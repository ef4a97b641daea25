"""SQS queues with the house defaults: SSL only, SQS-managed SSE, DLQ with redrive."""

from __future__ import annotations

from collections.abc import Sequence

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
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
    reason = (
        "This queue is itself a dead-letter queue (redrive target, Lambda async DLQ, SNS subscription "
        "or EventBridge target DLQ); its depth is alarmed instead of redriving it further."
    )
    nag.acknowledge(dlq, "AwsSolutions-SQS3", reason)
    nag.acknowledge(dlq, "Serverless::Serverless-SQSRedrivePolicy", reason)
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


PRODUCERS_ONLY_SID = "OnlyItsProducersSend"


def only_producers(*queues: sqs.Queue, roles: Sequence[iam.IRole] = (), sources: Sequence[str] = ()) -> None:
    """The queues' producers alone send to them: each role is granted sqs:SendMessage (and so
    SendMessageBatch) on them, and every queue's policy denies it to everyone else.

    `roles`: execution roles that send themselves (matched on aws:PrincipalArn: every session of
    the role); `sources`: AWS resources whose service sends for them (an SNS topic, an EventBridge
    rule; matched on aws:SourceArn; the target's own grant is the queue policy's Allow). A resource
    policy's Deny beats any identity policy's Allow, so an operator or developer role with sqs:*
    cannot forge a record. Neither given: nobody sends (a dead-letter queue filled only by its
    source's redrive, which SQS does without a SendMessage).
    """
    for role in roles:
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=["sqs:SendMessage"], resources=[queue.queue_arn for queue in queues])
        )
    conditions: dict[str, dict[str, list[str]]] = {}
    if roles:
        conditions["ArnNotEquals"] = {"aws:PrincipalArn": [role.role_arn for role in roles]}
    if sources:
        conditions.setdefault("ArnNotEquals", {})["aws:SourceArn"] = list(sources)
    for queue in queues:
        queue.add_to_resource_policy(
            iam.PolicyStatement(
                sid=PRODUCERS_ONLY_SID,
                effect=iam.Effect.DENY,
                principals=[iam.AnyPrincipal()],
                actions=["sqs:SendMessage"],
                resources=[queue.queue_arn],
                conditions=conditions or None,
            )
        )
