"""The flows scripts/walks.py follows: a send through the api handler and a poll cycle through
the poller handler, on in-process moto with SES and SNS simulated at the transport edge."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from local.simulator import Simulator
from sendledger.adapters import aws as aws_clients
from sendledger.handlers import api, poller
from sendledger.settings import Settings
from tests.conftest import ADMIN, SENDER, TABLE, moto_ledger, moto_runtime
from tests.integration.conftest import make_ingestion
from tests.support.fakes import FakeClock, FakeLambdaContext, api_event

Flow = Callable[[], object]


@contextmanager
def flows() -> Iterator[tuple[Flow, Flow, Flow]]:
    """(send one alert, let the simulator emit its events, run one scheduled poll cycle)."""
    with moto_ledger():
        aws_clients.client.cache_clear()
        simulator = Simulator.install()
        try:
            clock = FakeClock()
            # One apply at a time: every apply runs on the traced thread.
            settings = Settings(
                table_name=TABLE,
                sender_email=SENDER,
                poll_interval_seconds=60,
                admin_principals=[ADMIN],
                poll_apply_concurrency=1,
            )
            runtime = moto_runtime(clock, settings)
            make_ingestion(runtime)
            keys = itertools.count(1)

            def send() -> object:
                body = {
                    "channel": "email",
                    "to": "success@simulator.amazonses.com",
                    "template": {"id": "alert", "version": "1"},
                    "params": {"summary": "disk full"},
                }
                event = api_event("POST", "/v1/messages", body, headers={"Idempotency-Key": f"walk-{next(keys)}"})
                answer = api.lambda_handler(event, FakeLambdaContext(), runtime)
                assert answer["statusCode"] == 202, answer
                return answer

            def deliver_events() -> object:
                clock.advance(1)
                return simulator.flush()

            def poll() -> object:
                return poller.lambda_handler({}, FakeLambdaContext(function_name="sendledger-poller"), runtime)

            yield send, deliver_events, poll
        finally:
            simulator.uninstall()
            aws_clients.client.cache_clear()
