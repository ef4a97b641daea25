"""The status-out resources in the synthesized template."""

from __future__ import annotations

import pytest
from aws_cdk.assertions import Match, Template

from tests.infra.conftest import synth


@pytest.fixture(scope="module")
def with_callbacks() -> Template:
    return synth(callback_url="https://hooks.example.com/sendledger")


def test_the_publisher_reads_the_stream_with_partial_failures_bisection_and_a_dlq(with_callbacks: Template) -> None:
    with_callbacks.has_resource_properties(
        "AWS::DynamoDB::Table", {"StreamSpecification": {"StreamViewType": "NEW_AND_OLD_IMAGES"}}
    )
    with_callbacks.has_resource_properties(
        "AWS::Lambda::EventSourceMapping",
        {
            "StartingPosition": "TRIM_HORIZON",
            "BisectBatchOnFunctionError": True,
            "MaximumRetryAttempts": 10,
            "FunctionResponseTypes": ["ReportBatchItemFailures"],
            "DestinationConfig": {"OnFailure": {"Destination": Match.any_value()}},
        },
    )
    with_callbacks.has_resource_properties("AWS::Events::EventBus", {"Name": "sendledger-dev"})


def test_callbacks_have_a_rule_a_queue_with_redrive_and_a_secret(with_callbacks: Template) -> None:
    with_callbacks.has_resource_properties(
        "AWS::Events::Rule", {"EventPattern": {"source": ["sendledger"]}, "EventBusName": Match.any_value()}
    )
    with_callbacks.has_resource_properties(
        "AWS::SQS::Queue", {"RedrivePolicy": {"maxReceiveCount": 6, "deadLetterTargetArn": Match.any_value()}}
    )
    with_callbacks.resource_count_is("AWS::SecretsManager::Secret", 2)
    with_callbacks.has_resource_properties(
        "AWS::CloudWatch::Alarm", {"MetricName": "IteratorAge", "Namespace": "AWS/Lambda"}
    )
