"""Every adapter's boto3 client sends the one User-Agent fixed per container (adapters/sdk.py).

botocore would otherwise rebuild the header from its components twice per request; the fixed
header is the CPU saving, so a client built without it must fail here.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from moto import mock_aws

from sendledger.adapters import aws, sdk
from sendledger.adapters.dynamodb.table import ledger_client
from sendledger.adapters.eventbridge import EventBridgeBus
from sendledger.adapters.sqs import sqs_client
from sendledger.providers.sns.logs import CloudWatchLogReader


def user_agents(client: Any, *calls: tuple[str, dict[str, Any]]) -> list[str]:
    seen: list[str] = []

    def record(request: Any, **_: Any) -> None:
        header = request.headers["User-Agent"]
        seen.append(header.decode() if isinstance(header, bytes) else header)

    client.meta.events.register_first("before-send", record)
    for operation, params in calls:
        with contextlib.suppress(client.exceptions.ClientError):  # the answer does not matter here
            getattr(client, operation)(**params)
    return seen


@pytest.mark.parametrize(
    ("build", "calls"),
    [
        (ledger_client, [("list_tables", {}), ("describe_limits", {})]),
        (sqs_client, [("list_queues", {}), ("list_queues", {"QueueNamePrefix": "x"})]),
        (lambda: aws.client("sesv2"), [("list_configuration_sets", {}), ("list_contact_lists", {})]),
        (lambda: aws.client("sns"), [("list_topics", {}), ("list_subscriptions", {})]),
        (lambda: CloudWatchLogReader().client, [("describe_log_groups", {}), ("describe_log_groups", {"limit": 1})]),
        (lambda: EventBridgeBus("bus").client, [("list_event_buses", {}), ("list_rules", {})]),
    ],
    ids=["dynamodb", "sqs", "sesv2", "sns", "logs", "events"],
)
def test_each_client_sends_the_fixed_user_agent(build: Any, calls: list[tuple[str, dict[str, Any]]]) -> None:
    aws.client.cache_clear()
    with mock_aws():
        client = build()
        seen = user_agents(client, *calls)
    assert len(seen) == len(calls)
    assert all(header.startswith(sdk.USER_AGENT) for header in seen), seen


def test_the_user_agent_names_the_product_the_sdk_and_the_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_EXECUTION_ENV", "AWS_Lambda_python3.14")
    header = sdk.user_agent()
    assert header.startswith("sendledger Botocore/")
    assert "lang/python#" in header and header.endswith("exec-env/AWS_Lambda_python3.14")
