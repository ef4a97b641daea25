"""EMAIL_PROVIDER=sendgrid in the local stack: the simulated SendGrid API, its secrets, its events queue.

The handlers run as deployed: the SendGrid adapter reads its API key from Secrets Manager (moto)
and calls SENDGRID_API_BASE, here the simulator's HTTP server; the simulator posts signed
webhook batches to the local api, which verifies them with the public key from Secrets Manager.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

import boto3

from local.constants import MAX_RECEIVE_COUNT
from local.simulator import Simulator
from local.simulator.sendgrid_http import SendGridServer
from sendledger import names

LOG = logging.getLogger("sendledger.local")

API_KEY_SECRET = "sendledger/sendgrid-api-key"  # noqa: S105 (a name)
WEBHOOK_KEY_SECRET = "sendledger/sendgrid-webhook-public-key"  # noqa: S105 (a name)
EVENTS_QUEUE = "sendledger-sendgrid-events"
EVENTS_DLQ = "sendledger-sendgrid-events-dlq"
POST_TIMEOUT_SECONDS = 30.0


@dataclass
class LocalSendGrid:
    server: SendGridServer
    api_url: str  # where the simulator posts webhook batches: the local api

    def post(self, body: bytes, headers: dict[str, str]) -> int:
        request = urllib.request.Request(  # noqa: S310 (a local http URL)
            self.api_url + names.SENDGRID_EVENTS_PATH, data=body, headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=POST_TIMEOUT_SECONDS) as response:  # noqa: S310
                return int(response.status)
        except urllib.error.HTTPError as error:
            return int(error.code)

    def stop(self) -> None:
        self.server.stop()


def start_sendgrid(simulator: Simulator, environ: MutableMapping[str, str], region: str) -> SendGridServer:
    """Serve the simulated API, store its keys as secrets, create the events queue; set the wiring."""
    server = SendGridServer(simulator.sendgrid)
    server.start()
    secrets = boto3.client("secretsmanager", region_name=region)
    api_key = _secret(secrets, API_KEY_SECRET, simulator.sendgrid.api_key)
    public_key = _secret(secrets, WEBHOOK_KEY_SECRET, simulator.sendgrid.public_key)
    sqs = boto3.client("sqs", region_name=region)
    dlq_url = sqs.create_queue(QueueName=EVENTS_DLQ)["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    redrive = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(MAX_RECEIVE_COUNT)})
    queue_url = sqs.create_queue(
        QueueName=EVENTS_QUEUE, Attributes={"VisibilityTimeout": "60", "RedrivePolicy": redrive}
    )["QueueUrl"]
    environ.update(
        {
            names.ENV_SENDGRID_API_BASE: server.url,
            names.ENV_SENDGRID_API_KEY_SECRET_ARN: api_key,
            names.ENV_SENDGRID_WEBHOOK_KEY_SECRET_ARN: public_key,
            names.ENV_SENDGRID_EVENTS_QUEUE_URL: queue_url,
        }
    )
    return server


def _secret(client: Any, name: str, value: str) -> str:
    arn: str = client.create_secret(Name=name, SecretString=value)["ARN"]
    return arn
