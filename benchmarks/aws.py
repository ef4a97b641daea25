"""The moto world every in-process figure runs in: the local stack's resources, in-process."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import boto3
from moto import mock_aws

import local.moto_serial  # noqa: F401  (in-process moto takes one request at a time: the poller is concurrent)
from benchmarks.environment import ACCOUNT_ID, REGION
from local.ports import free_ports

BASELINE_APP_TABLE = "baseline-app"
BASELINE_IDEMPOTENCY_TABLE = "baseline-idempotency"
PRINCIPAL = f"arn:aws:iam::{ACCOUNT_ID}:user/benchmark-caller"


@dataclass
class World:
    resources: Any  # local.resources.Resources

    def refresh_watermarks(self) -> None:
        """A healthy pipeline: both sources drained just now (as tests/conftest.py does)."""
        from sendledger.domain.clock import iso

        now = iso(datetime.now(UTC))
        client = boto3.client("dynamodb", region_name=REGION)
        for source in ("ses", "sms"):
            item = {"pk": f"WM#{source}", "sk": "WM", "watermark": now, "updated_at": now}
            client.put_item(TableName=self.resources.ledger_table, Item={k: {"S": v} for k, v in item.items()})

    def empty_tables(self) -> None:
        """Recreate every table empty (between timed samples, never inside one).

        moto's TransactWriteItems deep-copies each involved table once per transaction item
        (its rollback snapshot), and deleted items leave empty partitions behind, so in moto a
        transaction gets dearer as the table fills; in DynamoDB it does not. Starting every
        sample from empty tables, ours and the baseline's alike, keeps that artifact out.
        """
        dynamodb = boto3.client("dynamodb", region_name=REGION)
        for name in dynamodb.list_tables()["TableNames"]:
            table = dynamodb.describe_table(TableName=name)["Table"]
            ttl = dynamodb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
            arguments: dict[str, Any] = {
                "TableName": name,
                "BillingMode": "PAY_PER_REQUEST",
                "AttributeDefinitions": table["AttributeDefinitions"],
                "KeySchema": table["KeySchema"],
            }
            indexes = [
                {"IndexName": i["IndexName"], "KeySchema": i["KeySchema"], "Projection": i["Projection"]}
                for i in table.get("GlobalSecondaryIndexes", [])
            ]
            if indexes:
                arguments["GlobalSecondaryIndexes"] = indexes
            dynamodb.delete_table(TableName=name)
            dynamodb.create_table(**arguments)
            if ttl.get("TimeToLiveStatus") in ("ENABLED", "ENABLING"):
                dynamodb.update_time_to_live(
                    TableName=name,
                    TimeToLiveSpecification={"Enabled": True, "AttributeName": ttl["AttributeName"]},
                )


@contextlib.contextmanager
def moto_world() -> Iterator[World]:
    """mock_aws + the local stack's resources + the baseline's two tables, caches cleared."""
    with mock_aws():
        yield from _world()


@contextlib.contextmanager
def moto_server_world() -> Iterator[World]:
    """The same world behind moto's HTTP server: every request crosses a local socket.

    In-process moto answers a request without any transport, so a chatty design pays nothing
    for its extra round trips; deployed, every request is one. Over HTTP each request pays a
    serialised request, a socket round trip and a parsed response, as it does against AWS.
    """
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    (port,) = free_ports(1)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    previous = os.environ.get("AWS_ENDPOINT_URL")
    os.environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{port}"
    try:
        yield from _world()
    finally:
        if previous is None:
            os.environ.pop("AWS_ENDPOINT_URL", None)
        else:
            os.environ["AWS_ENDPOINT_URL"] = previous
        server.stop()


def _world() -> Iterator[World]:
    from local.resources import create_resources

    resources = create_resources(region=REGION, account_id=ACCOUNT_ID, with_stream=False)
    os.environ.update(resources.handler_environment())
    boto3.client("ses", region_name=REGION).verify_email_identity(EmailAddress=resources.sender_email)
    _create_baseline_tables()
    reset_caches()
    yield World(resources)
    reset_caches()


def reset_caches() -> None:
    """Clients and services are built once per container: rebuild them for this moto world."""
    from sendledger import bootstrap
    from sendledger.adapters import aws as aws_clients

    aws_clients.client.cache_clear()
    bootstrap.runtime.cache_clear()


def _create_baseline_tables() -> None:
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    dynamodb.create_table(
        TableName=BASELINE_APP_TABLE,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
    )
    dynamodb.create_table(
        TableName=BASELINE_IDEMPOTENCY_TABLE,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
    )
    dynamodb.update_time_to_live(
        TableName=BASELINE_IDEMPOTENCY_TABLE,
        TimeToLiveSpecification={"Enabled": True, "AttributeName": "expiration"},
    )


def api_event(
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    principal: str = PRINCIPAL,
) -> dict[str, Any]:
    """The API Gateway REST (v1) proxy event the local stack builds for the same request."""
    from local.apigateway import build_event

    all_headers = {"Content-Type": "application/json"} if body is not None else {}
    all_headers.update(headers or {})
    return build_event(
        method=method,
        target=path,
        headers=all_headers.items(),
        body=json.dumps(body).encode() if body is not None else b"",
        principal=principal,
        account_id=ACCOUNT_ID,
    )


def lambda_context(function_name: str, timeout_seconds: float = 29.0) -> Any:
    from local.lambda_context import LambdaContext

    return LambdaContext(
        function_name=function_name, region=REGION, account_id=ACCOUNT_ID, timeout_seconds=timeout_seconds
    )


class _Discard(io.TextIOBase):
    """Where the handlers' log lines go in the benchmark: counted (CloudWatch Logs bills them), not kept."""

    written = 0  # bytes, over every instance

    def write(self, text: str) -> int:
        _Discard.written += len(text.encode("utf-8"))
        return len(text)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Powertools writes logs and EMF metrics to stdout, as in Lambda: discard them here."""
    with contextlib.redirect_stdout(_Discard()):
        yield


def status_of(response: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    text = response.get("body") or ""
    return int(response["statusCode"]), (json.loads(text) if text else {})
