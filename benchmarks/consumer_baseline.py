"""The baseline consumer: what applying SES events costs without sendledger (never imported by functions/).

A plain loop over the SES events queue: receive ten, parse each body with ``json`` (the SNS
envelope, then the SES event), apply it with one boto3 ``update_item`` (the message's state and
the event's time, conditioned on the event not being there yet), delete the batch. No dedupe
table, no history, no suppression rules, no state machine, no metrics, no concurrency.
"""

from __future__ import annotations

import json
from typing import Any

STATES = {"Send": "accepted", "Delivery": "delivered", "Bounce": "bounced", "Complaint": "complained"}


def drain(sqs: Any, dynamodb: Any, queue_url: str, table: str) -> int:
    applied = 0
    while True:
        messages = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages")
        if not messages:
            return applied
        for message in messages:
            event = json.loads(json.loads(message["Body"])["Message"])
            message_id = event["mail"]["tags"]["sendledger-message-id"][0]
            kind = event["eventType"]
            dynamodb.update_item(
                TableName=table,
                Key={"pk": {"S": f"MSG#{message_id}"}, "sk": {"S": "RCPT"}},
                UpdateExpression="SET #s = :s, #e = :e",
                ConditionExpression="attribute_not_exists(#e)",
                ExpressionAttributeNames={"#s": "state", "#e": f"event_{kind}"},
                ExpressionAttributeValues={
                    ":s": {"S": STATES.get(kind, "accepted")},
                    ":e": {"S": event["mail"]["timestamp"]},
                },
            )
            applied += 1
        sqs.delete_message_batch(
            QueueUrl=queue_url,
            Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)],
        )
