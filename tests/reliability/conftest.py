"""Reliability fixtures on top of the root ones (`aws`, `services`, `api`, `clock`, ...)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.retries import standard
from moto import mock_aws
from moto.core.model_instances import reset_model_data

from local.simulator import Simulator
from sendledger.adapters import aws as aws_clients
from sendledger.adapters.dynamodb.ledger import LedgerTable
from sendledger.adapters.dynamodb.schema import create_ledger_table
from sendledger.bootstrap import Runtime
from sendledger.domain.caller_settings import CallerSettingsCache
from sendledger.domain.provider import Backoff
from sendledger.providers.ses.sender import SesEmailSender
from sendledger.providers.sns.sender import SnsSmsSender
from sendledger.settings import Settings
from sendledger.usecases.poll import CycleFailed, CycleReport
from tests.conftest import SENDER, TABLE, Api
from tests.integration.conftest import (
    Ingestion,
    ingestion,  # noqa: F401  (the integration fixture, for these tests too)
    make_ingestion,
)
from tests.reliability.faults import FIGURES, GROUND_TRUTH, Client, Hooks, LedgerWatch, ProviderCalls
from tests.reliability.provider_legs import Leg, build_leg, drain
from tests.support.counting import ledger_emitters
from tests.support.fakes import ADMIN, FakeClock, FakeSleeper
from tests.support.fixtures import put_watermark

FIGURES_DIR = "SENDLEDGER_RELIABILITY_FIGURES"  # set by tests/reliability/report.py


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Each process (xdist worker) leaves what it measured for the report."""
    directory = os.environ.get(FIGURES_DIR)
    if not directory or not FIGURES:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    Path(directory, f"figures-{worker}-{os.getpid()}.json").write_text(json.dumps(dict(FIGURES), sort_keys=True))


@pytest.fixture(autouse=True)
def no_sdk_backoff_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore's own retries still happen, but without real sleeping."""
    monkeypatch.setattr(standard.ExponentialBackoff, "delay_amount", lambda self, context: 0)


@pytest.fixture
def client(api) -> Client:  # type: ignore[no-untyped-def]
    return Client(api)


@pytest.fixture
def dynamo(services: Runtime) -> Iterator[Hooks]:
    """Fault hooks on the DynamoDB client the ledger's stores share."""
    hooks = Hooks("dynamodb", ledger_emitters(services.messages))
    yield hooks
    hooks.close()


@pytest.fixture
def ses(services: Runtime) -> Iterator[Hooks]:
    """Fault hooks on the SESv2 client the SES adapter uses."""
    hooks = Hooks("sesv2", [aws_clients.client("sesv2").meta.events])
    yield hooks
    hooks.close()


def run_poll(world_ingestion: Ingestion) -> CycleReport | CycleFailed:
    """One poll cycle; a failed step is the invocation's error (EventBridge retries the next cycle)."""
    try:
        return world_ingestion.poll()
    except CycleFailed as failed:
        return failed


@dataclass
class SharedWorld:
    """The root fixtures' world (moto, table, services, api, simulator), built once per module.

    Building it costs ~0.5 s (nine botocore clients); schedules that each use their own key,
    account and address can share it, which also lets one LedgerWatch see the whole run.
    """

    services: Runtime
    clock: FakeClock
    client: Client
    simulator: Simulator
    dynamo: Hooks
    ses: Hooks
    watch: LedgerWatch
    ingestion: Ingestion
    leg: Leg = field(init=False)  # the email provider under test (tests/reliability/provider_legs.py)

    def poll(self) -> Any:
        return run_poll(self.ingestion)

    def fresh(self) -> None:
        """Empty the table (moto deep-copies a table on every transaction: keep it small)."""
        client = boto3.client("dynamodb")
        keys = [
            {"pk": i["pk"], "sk": i["sk"]} for i in client.scan(TableName=TABLE, ProjectionExpression="pk, sk")["Items"]
        ]
        for start in range(0, len(keys), 25):
            batch = [{"DeleteRequest": {"Key": key}} for key in keys[start : start + 25]]
            client.batch_write_item(RequestItems={TABLE: batch})
        self.drain_queue()
        for queue in self.leg.queues:
            drain(queue)
        self.simulator.reset()
        forget_moto_instances()
        for hooks in (self.dynamo, self.ses, self.leg.faults):
            hooks.requests.clear()
        self.watch = LedgerWatch()
        # The table is empty again: so is the container's cache of its caller settings (it expires
        # on the fake clock, which an earlier example may have left anywhere).
        self.services.caller_settings.cache = CallerSettingsCache()
        self.healthy_watermarks()

    def drain_queue(self) -> None:
        drain(self.ingestion.queue_url)

    def publish_receipt(self, sent: dict[str, Any]) -> None:
        """The receipt the publisher writes from an accepted SMS's outcome (no stream here)."""
        from sendledger.adapters.dynamodb.sms_receipts import SmsReceiptItems
        from sendledger.ports.status_out import AcceptedSms

        accepted = AcceptedSms(sent["message_id"], sent["provider_message_id"], escalates=bool(sent.get("escalation")))
        SmsReceiptItems(self.services.messages.table).write(accepted)

    def healthy_watermarks(self) -> None:
        for source in self.leg.sources:
            put_watermark(TABLE, source, self.clock.now())


def forget_moto_instances() -> None:
    """Drop moto's registry of every model object ever built (it only feeds moto's dashboard).

    moto's TransactWriteItems deep-copies the table for its rollback, and each copied Table and
    Item registers itself there for good: ~30 MB per stateful example, so a long run without
    this is killed for memory. Live tables stay in their backend; only the registry is cleared.
    """
    reset_model_data()


@contextmanager
def shared_world(provider: str = "ses") -> Iterator[SharedWorld]:
    """The world, with `provider` the email provider (one of provider_legs.LEGS)."""
    from aws_lambda_powertools.utilities import parameters

    with mock_aws(), pytest.MonkeyPatch.context() as patch:
        parameters.clear_caches()  # a secret of an earlier module's moto account must not be served
        aws_clients.client.cache_clear()
        create_ledger_table(boto3.client("dynamodb"), TABLE)
        boto3.client("ses").verify_email_identity(EmailAddress=SENDER)
        boto3.client("sesv2").create_configuration_set(ConfigurationSetName="sendledger-events")
        clock = FakeClock()
        simulator = Simulator.install(clock=clock.now)  # its events carry the fake clock's times
        watching: list[SharedWorld] = []
        provider_calls = ProviderCalls(lambda: watching[0].watch)
        provider_calls.install(boto3._get_default_session())
        aws_clients.client.cache_clear()
        services = Runtime.over(
            LedgerTable.named(TABLE, clock),
            email=SesEmailSender(SENDER, "sendledger-events"),
            sms=SnsSmsSender(),
            clock=clock,
            # as the root fixture
            settings=Settings(
                table_name=TABLE, sender_email=SENDER, poll_interval_seconds=60, admin_principals=[ADMIN]
            ),
            sleep=FakeSleeper(clock=clock),
            backoff=Backoff(rng=lambda: 0.5),
        )
        ingestion = make_ingestion(services)
        dynamo = Hooks("dynamodb", ledger_emitters(services.messages))
        ses = Hooks("sesv2", [aws_clients.client("sesv2").meta.events])
        world = SharedWorld(
            services, clock, Client(Api(services, patch)), simulator, dynamo, ses, LedgerWatch(), ingestion
        )
        watching.append(world)
        world.leg = build_leg(provider, world)
        GROUND_TRUTH.append(world.leg.emails_to)
        world.healthy_watermarks()
        try:
            yield world
        finally:
            GROUND_TRUTH.remove(world.leg.emails_to)
            world.leg.close()
            provider_calls.uninstall()
            dynamo.close()
            ses.close()
            simulator.uninstall()
            aws_clients.client.cache_clear()
