"""Each provider's AWS resources: one construct per provider slice, ``infra/providers/<name>.py``.

The stack builds the construct of every provider the deployment enables (settings.enabled_providers),
and only those: its secrets, queues, topics, log groups and their grants, found by the
registry's name. Each module exports ``RESOURCES``, a construct class with the uniform
constructor below and the methods of `ProviderResources`, and ``CONSTRUCT_ID`` (stable: a new id
replaces the resources).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

if TYPE_CHECKING:
    from infra.data import LedgerData
    from infra.lambdas import SendledgerFunction
    from infra.settings import Settings


@dataclass(frozen=True)
class Webhook:
    """A provider that pushes: its route has no IAM (the provider signs; its intake function
    verifies, infra/webhooks.py) and the verified events go to the provider's queue alone."""

    provider: str  # the registry's name (the intake's construct id and its replay-token items)
    path: str
    auth: str  # why the route may skip SigV4 (cdk-nag's acknowledgement)
    output: str  # the stack output that names its URL
    queue: sqs.Queue  # verified events wait here for the poller; the intake is its one producer
    secret_arns: tuple[str, ...]  # what the intake reads to verify a POST (the signing key)


@dataclass
class Functions:
    """What every provider may give its extra functions (an SNS log subscription's handler)."""

    code: lambda_.Code
    environment: Mapping[str, str]
    data: LedgerData
    settings: Settings


@dataclass
class Built:
    """What the stack reads back from a provider's construct."""

    environment: dict[str, str] = field(default_factory=dict)
    dead_letter_queues: dict[str, sqs.IQueue] = field(default_factory=dict)
    event_queues: dict[str, sqs.IQueue] = field(default_factory=dict)  # their oldest message is alarmed
    outputs: dict[str, str] = field(default_factory=dict)
    webhook: Webhook | None = None


class ProviderResources(Protocol):
    built: Built

    def functions(self, context: Functions) -> list[SendledgerFunction]:
        """Functions only this provider needs (none for most)."""

    def grant(self, *, api: SendledgerFunction, poller: SendledgerFunction) -> None:
        """What the api (sends) and the poller (sends, event lanes) may do with them."""

    def attach(self, poller: SendledgerFunction) -> None:
        """Wire the poller to the resources once it exists (an SQS event source in push mode)."""


class ResourcesClass(Protocol):
    def __call__(
        self, scope: Construct, construct_id: str, *, settings: Settings, topic_key: kms.IKey
    ) -> ProviderResources: ...


def build(scope: Construct, provider: str, *, settings: Settings, topic_key: kms.IKey) -> ProviderResources:
    module = importlib.import_module(f"infra.providers.{provider}")
    resources: ResourcesClass = module.RESOURCES
    return resources(scope, str(module.CONSTRUCT_ID), settings=settings, topic_key=topic_key)
