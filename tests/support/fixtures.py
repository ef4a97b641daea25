"""The AWS reference payloads every suite compares against (tests/fixtures/aws-formats)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import boto3

from sendledger.domain.clock import iso

AWS_FORMATS = Path(__file__).resolve().parents[1] / "fixtures" / "aws-formats"


def aws_format(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((AWS_FORMATS / name).read_text())
    return loaded


def put_watermark(table_name: str, source: str, at: datetime) -> None:
    """Seed a source watermark as the poller writes it (a test's healthy or stale pipeline)."""
    boto3.client("dynamodb").put_item(
        TableName=table_name,
        Item={
            "pk": {"S": f"WM#{source}"},
            "sk": {"S": "WM"},
            "watermark": {"S": iso(at)},
            "updated_at": {"S": iso(at)},
        },
    )


def ingest_sqs_body(sink: Any, body: str, report: Any) -> None:
    """One SES events queue message, applied as the SES lane applies it (MalformedEvent propagates)."""
    from sendledger.providers.ses.events import parse_sqs_body

    for event in parse_sqs_body(body):
        sink.apply(event, report)
