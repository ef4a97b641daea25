"""Each provider as the local stack plays it: one simulator module per provider slice.

``local/simulator/providers/<name>.py`` (found by the registry's name) serves the provider's API
with the mailbox-simulator addresses and fault labels of SPEC §8, emits its events in its own
format by its own path, and `start` wires it into the local stack before any handler reads its
settings: its secrets in moto's Secrets Manager, its queues, its base URL. SES and SNS are played
at the botocore edge by the core `Simulator`, the others over HTTP.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from local.simulator.core import Simulator

POST_TIMEOUT_SECONDS = 30.0


@dataclass
class LocalContext:
    environ: MutableMapping[str, str]
    region: str
    simulator: Simulator  # the core: its outbox, clock and fault counter are shared


class LocalProvider(Protocol):
    name: str
    url: str  # the simulated API's base URL ("" when it is played at the botocore edge)

    def flush(self, api_url: str) -> dict[str, int]:
        """Deliver what is due to the local api (a webhook's signed batch): counts for the cycle line."""

    def outbox(self) -> list[dict[str, Any]]:
        """What it accepted, when its entries are not already in the core simulator's outbox."""

    def stop(self) -> None: ...


def events_queue(context: LocalContext, name: str) -> str:
    """A provider's queue of verified webhook events (+ DLQ), as deployed; returns its URL."""
    import boto3

    from local.constants import MAX_RECEIVE_COUNT

    sqs = boto3.client("sqs", region_name=context.region)
    dlq_url = sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    redrive = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(MAX_RECEIVE_COUNT)})
    url: str = sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "60", "RedrivePolicy": redrive})[
        "QueueUrl"
    ]
    return url


def post_webhook(api_url: str, provider: str, body: bytes, headers: dict[str, str]) -> int:
    """A signed POST to the local api's webhook route, as the provider makes it; its status."""
    import urllib.error
    import urllib.request

    from sendledger import names

    request = urllib.request.Request(  # noqa: S310 (a local http URL)
        api_url + names.webhook_path(provider), data=body, headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=POST_TIMEOUT_SECONDS) as response:  # noqa: S310
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def start(provider: str, context: LocalContext) -> LocalProvider | None:
    """Start the local side of one provider (None: nothing to serve beyond the core simulator)."""
    module = importlib.import_module(f"local.simulator.providers.{provider}")
    started: LocalProvider | None = module.start(context)
    return started
