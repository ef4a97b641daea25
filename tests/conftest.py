from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import hypothesis
import pytest
from hypothesis import Phase
from moto import mock_aws

import local.moto_serial  # noqa: F401  (in-process moto takes one request at a time)
from tests.support import shared_models

os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.setdefault("AWS_REGION", "us-east-1")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "sendledger")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "sendledger")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.pop("AWS_ENDPOINT_URL", None)

from sendledger.adapters import aws as aws_clients
from sendledger.adapters.dynamodb.ledger import LedgerTable
from sendledger.adapters.dynamodb.schema import create_ledger_table
from sendledger.bootstrap import Runtime
from sendledger.domain.provider import Backoff
from sendledger.providers.ses.sender import SesEmailSender
from sendledger.providers.sns.sender import SnsSmsSender
from sendledger.settings import Settings
from tests.support.fakes import (
    ADMIN,
    PRINCIPAL,
    FakeClock,
    FakeLambdaContext,
    FakeSleeper,
    api_event,
    caller_id,
)
from tests.support.fixtures import put_watermark

shared_models.install()  # else every mock's new session parses the service models again

# One seed per run for every randomized Hypothesis test (the reliability suite's schedules and
# state machine): printed in pytest's header, and set in the environment so xdist workers, which
# inherit it, draw the same examples. Rerun a run with SENDLEDGER_HYPOTHESIS_SEED=<seed>.
SEED_VARIABLE = "SENDLEDGER_HYPOTHESIS_SEED"
os.environ.setdefault(SEED_VARIABLE, str(secrets.randbelow(2**32)))
HYPOTHESIS_SEED = int(os.environ[SEED_VARIABLE])


# No example fails for its wall time: time is measured in `make bench`, and a loaded CI box is slow.
hypothesis.settings.register_profile("sendledger", deadline=None)
# The named-sabotage runner only needs to know that a test fails, not the smallest example.
hypothesis.settings.register_profile(
    "sabotage",
    parent=hypothesis.settings.get_profile("sendledger"),
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
hypothesis.settings.load_profile(os.environ.get("SENDLEDGER_HYPOTHESIS_PROFILE", "sendledger"))


def pytest_report_header() -> str:
    return f"hypothesis seed: {HYPOTHESIS_SEED} (reproduce with {SEED_VARIABLE}={HYPOTHESIS_SEED})"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    # Also under -q, which hides the header: CI's log always says how to replay its examples.
    terminalreporter.write_line(f"hypothesis seed {HYPOTHESIS_SEED}: reproduce with {SEED_VARIABLE}={HYPOTHESIS_SEED}")


# The longest modules start first: two xdist workers then finish together instead of one
# running the state machine alone at the end of the run.
LONGEST_FIRST = (
    "tests/reliability/test_stateful_ledger.py",
    "tests/reliability/test_poller_crash.py",
    "tests/reliability/test_fault_matrix.py",
    "tests/reliability/test_provider_legs.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: every worker collects the same order


TABLE = "sendledger-test"
SENDER = "no-reply@example.com"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@contextmanager
def moto_ledger() -> Iterator[None]:
    """In-process moto with the ledger table, the sender identity and the configuration set."""
    with mock_aws():
        aws_clients.client.cache_clear()
        create_ledger_table(boto3.client("dynamodb"), TABLE)
        boto3.client("ses").verify_email_identity(EmailAddress=SENDER)
        boto3.client("sesv2").create_configuration_set(ConfigurationSetName="sendledger-events")
        yield
        aws_clients.client.cache_clear()


@pytest.fixture
def aws() -> Iterator[None]:
    with moto_ledger():
        yield


@pytest.fixture
def settings() -> Settings:
    return Settings(table_name=TABLE, sender_email=SENDER, poll_interval_seconds=60, admin_principals=[ADMIN])


def moto_runtime(clock: FakeClock, settings: Settings) -> Runtime:
    """The composition root over moto's ledger table, SES and SNS (a fake clock, no real backoff)."""
    return Runtime.over(
        LedgerTable.named(TABLE, clock),
        email=SesEmailSender(SENDER, "sendledger-events"),
        sms=SnsSmsSender(),
        clock=clock,
        settings=settings,
        sleep=FakeSleeper(clock=clock),
        backoff=Backoff(rng=lambda: 0.5),
    )


@pytest.fixture
def services(aws: None, clock: FakeClock, settings: Settings) -> Runtime:
    return moto_runtime(clock, settings)


@pytest.fixture
def warm_caller_settings(services: Runtime) -> None:
    """This container read the caller's settings (is it in test mode?) less than
    CALLER_SETTINGS_CACHE ago: the steady state the send budget is stated for. The read itself,
    one GetItem per caller, container and cache period: tests/integration/test_test_mode.py."""
    services.caller_settings.get(caller_id(PRINCIPAL))


@pytest.fixture
def warm_templates(api: Any) -> None:
    """This container resolved the caller's templates within TEMPLATE_CACHE_SECONDS (tests/support/templates.py)."""
    from tests.support.templates import warm_templates as warm

    warm(api)


@pytest.fixture
def healthy_watermarks(services: Runtime, clock: FakeClock) -> None:
    """The poller drained both sources just now (what a healthy pipeline looks like)."""
    for source in ("ses", "sms"):
        put_watermark(TABLE, source, clock.now())


@pytest.fixture
def warm_watermarks(services: Runtime, clock: FakeClock, healthy_watermarks: None) -> None:
    """This container read both watermarks less than WATERMARK_CACHE ago: the steady state the
    send budget is stated for. The read itself, one GetItem per source, container and cache
    period: tests/integration/test_send_capacity.py."""
    for source in ("ses", "sms"):
        services.poller_state.recent_watermark(source, clock.now())


class Api:
    """Calls the real `api` Lambda handler with API Gateway events, wired to `services`."""

    def __init__(self, services: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
        from sendledger import bootstrap

        self.services = self.runtime = services
        # Handlers a test calls directly (not through this object) get the same runtime.
        monkeypatch.setattr(bootstrap, "runtime", lambda: self.runtime)

    def __call__(self, method: str, path: str, body: Any = None, **kwargs: Any) -> tuple[int, dict[str, str], Any]:
        status, headers, text = self.raw(method, path, body, **kwargs)
        return status, headers, json.loads(text) if text else None

    def raw(self, method: str, path: str, body: Any = None, **kwargs: Any) -> tuple[int, dict[str, str], str]:
        """The answer's body as the handler gave it (for byte-for-byte comparisons)."""
        from sendledger import names
        from sendledger.handlers import api, webhooks

        kwargs.setdefault("principal", ADMIN if path.startswith("/v1/admin/") else PRINCIPAL)  # as deployed
        # As API Gateway routes them: the providers' webhooks to their own function, the rest to the api.
        handler = webhooks.lambda_handler if path.startswith(names.PROVIDERS_PATH) else api.lambda_handler
        response = handler(api_event(method, path, body, **kwargs), FakeLambdaContext(), self.runtime)
        headers = {k.lower(): v[0] for k, v in (response.get("multiValueHeaders") or {}).items()}
        headers.update({k.lower(): v for k, v in (response.get("headers") or {}).items()})
        return response["statusCode"], headers, response.get("body") or ""


@pytest.fixture
def api(services: Runtime, monkeypatch: pytest.MonkeyPatch) -> Api:
    return Api(services, monkeypatch)
