"""The baseline: what a careful user writes without sendledger (never imported by functions/).

A Lambda behind the same API Gateway event, wrapped in Powertools ``@idempotent`` with a
``DynamoDBPersistenceLayer`` on its own table (key: caller + Idempotency-Key header, payload
validated against the body, 30-day expiry), doing a suppression ``GetItem``, the SES v2
``SendEmail`` (configuration set + tag) and an audit ``PutItem``.

What it does not do (and sendledger does): record the intent before the provider call (a
crash or timeout after SES accepted leaves nothing but an expired in-progress record, so the
retry sends again), check suppression atomically with the write, keep a history, or tell
"unknown" from "not sent".
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import boto3
from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent,
)

from benchmarks.aws import BASELINE_APP_TABLE, BASELINE_IDEMPOTENCY_TABLE, api_event, lambda_context, status_of
from benchmarks.counting import counting
from benchmarks.environment import REGION
from local.constants import CONFIGURATION_SET, SENDER_EMAIL

SENDER = SENDER_EMAIL
RETENTION_SECONDS = 30 * 86_400

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def make_handler() -> Handler:
    """Build the baseline Lambda (inside the moto world: clients are created here)."""
    logger = Logger(service="baseline")
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    sesv2 = boto3.client("sesv2", region_name=REGION)
    sns = boto3.client("sns", region_name=REGION)
    persistence = DynamoDBPersistenceLayer(table_name=BASELINE_IDEMPOTENCY_TABLE)
    config = IdempotencyConfig(
        event_key_jmespath='[requestContext.identity.userArn, headers."idempotency-key"]',
        payload_validation_jmespath="body",
        raise_on_no_idempotency_key=True,
        expires_after_seconds=RETENTION_SECONDS,
    )

    def send(channel: str, to: str, subject: str, text: str, message_id: str) -> str:
        if channel == "sms":
            answer = sns.publish(
                PhoneNumber=to,
                Message=text,
                MessageAttributes={"AWS.SNS.SMS.SMSType": {"DataType": "String", "StringValue": "Transactional"}},
            )
            return str(answer["MessageId"])
        answer = sesv2.send_email(
            FromEmailAddress=SENDER,
            Destination={"ToAddresses": [to]},
            Content={
                "Simple": {
                    "Subject": {"Data": subject, "Charset": "UTF-8"},
                    "Body": {"Text": {"Data": text, "Charset": "UTF-8"}},
                }
            },
            ConfigurationSetName=CONFIGURATION_SET,
            EmailTags=[{"Name": "app-message-id", "Value": message_id}],
        )
        return str(answer["MessageId"])

    @logger.inject_lambda_context(clear_state=True)
    @idempotent(config=config, persistence_store=persistence)
    def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        request = json.loads(event["body"])
        channel = str(request.get("channel", "email"))
        to = str(request["to"]).strip().lower()
        subject, text = render(request["template"]["id"], request.get("params") or {})
        suppression = dynamodb.get_item(
            TableName=BASELINE_APP_TABLE, Key={"pk": {"S": f"SUP#{to}"}}, ConsistentRead=True
        )
        message_id = str(uuid.uuid4())
        if suppression.get("Item", {}).get("suppressed", {}).get("BOOL"):
            state, provider_message_id = "suppressed", None
        else:
            state, provider_message_id = "accepted", send(channel, to, subject, text, message_id)
        now = datetime.now(UTC).isoformat()
        audit = {
            "pk": {"S": f"AUDIT#{message_id}"},
            "to": {"S": to},
            "state": {"S": state},
            "template": {"S": f"{request['template']['id']}@{request['template']['version']}"},
            "at": {"S": now},
        }
        if provider_message_id:
            audit["provider_message_id"] = {"S": provider_message_id}
        dynamodb.put_item(TableName=BASELINE_APP_TABLE, Item=audit)
        logger.info("sent", extra={"message_id": message_id, "state": state})
        body = {"message_id": message_id, "state": state, "provider_message_id": provider_message_id}
        return {"statusCode": 202, "headers": {"Content-Type": "application/json"}, "body": json.dumps(body)}

    return lambda_handler


def render(template_id: str, params: dict[str, str]) -> tuple[str, str]:
    """Subject and text, as a hand-written Lambda would format its two templates."""
    if template_id == "notice":
        return params.get("subject", ""), params.get("body", "")
    return f"Alert: {params.get('summary', '')}", params.get("summary", "")


def request_body(recipient: str) -> dict[str, Any]:
    return {
        "channel": "email",
        "to": recipient,
        "template": {"id": "alert", "version": "1"},
        "params": {"summary": "disk full on db-1"},
    }


def send_email(handler: Handler, index: int, tag: str = "t") -> tuple[int, dict[str, Any]]:
    event = api_event(
        "POST",
        "/v1/messages",
        request_body(f"base-{tag}-{index}@example.com"),
        {"Idempotency-Key": f"base-{tag}-{index}"},
    )
    return status_of(handler(event, lambda_context("baseline-send")))


def count_requests(handler: Handler) -> dict[str, Any]:
    from benchmarks.ours import _figure

    send_email(handler, 0, "warm")
    figures: dict[str, Any] = {}
    event = api_event("POST", "/v1/messages", request_body("count-send@example.com"), {"Idempotency-Key": "count-send"})
    with counting() as log:
        status, body = status_of(handler(event, lambda_context("baseline-send")))
        if status != 202 or body.get("state") != "accepted":
            raise RuntimeError(f"baseline send failed: {status} {body}")
        figures["send"] = _figure(log)
        log.reset()
        status, replayed = status_of(handler(event, lambda_context("baseline-send")))
        if status != 202 or replayed.get("message_id") != body.get("message_id"):
            raise RuntimeError(f"baseline replay did not replay: {status} {replayed}")
        figures["replay"] = _figure(log)
    return figures
