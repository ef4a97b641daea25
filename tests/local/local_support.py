from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import boto3
import pytest
import requests
from botocore.config import Config
from moto import mock_aws

from infra.constants import POLLER_TIMEOUT_SECONDS
from local.constants import CONFIGURATION_SET, REGION, SENDER_EMAIL
from local.lambda_context import DEFAULT_TIMEOUT_SECONDS
from local.resources import Resources, create_resources
from local.simulator import Simulator
from sendledger.providers.ses import MESSAGE_ID_TAG as SES_MESSAGE_ID_TAG
from tests.support.fakes import FakeClock, recent_start

# Where the local tests' fake clock starts (recent, see recent_start); 12 ms shows millisecond formatting.
START = recent_start() + timedelta(milliseconds=12)

REPO = Path(__file__).resolve().parents[2]
# botocore's retries["max_attempts"] counts RETRIES (max_attempts=1 is two attempts);
# "total_max_attempts": 1 is what "SDK retries disabled" means.
NO_RETRIES = Config(retries={"total_max_attempts": 1, "mode": "standard"})
# The longest one HTTP request to the local gateway may take: invocations are serialized, so a
# request may queue behind one poller invocation, then run for the api Lambda's own timeout.
REQUEST_TIMEOUT_SECONDS = POLLER_TIMEOUT_SECONDS + DEFAULT_TIMEOUT_SECONDS
CHECK_EVERY_SECONDS = 0.05  # how often wait_until looks again (the cadence, not a deadline)

T = TypeVar("T")


def wait_until(
    probe: Callable[[], T],
    deadline_seconds: float,
    describe: str | Callable[[], str],
    *,
    done: Callable[[T], bool] = bool,
    retry_on: tuple[type[BaseException], ...] = (),
    every: float = CHECK_EVERY_SECONDS,
) -> T:
    """Call ``probe`` until ``done`` holds for what it returned; that value is the result.

    Fails once ``deadline_seconds`` have passed, saying what was awaited (``describe``, a text or
    a function giving one, e.g. with a log) and what the last probe returned or raised (an
    exception in ``retry_on`` counts as "not yet"; any other one fails at once).
    """
    deadline = time.monotonic() + deadline_seconds
    last: Any = "nothing: the probe never ran"
    while True:
        try:
            value = probe()
        except retry_on as error:
            last = error
        else:
            if done(value):
                return value
            last = value
        if time.monotonic() >= deadline:
            what = describe() if callable(describe) else describe
            pytest.fail(f"waited {deadline_seconds:g} s for {what}; last seen: {last!r}")
        if every:
            time.sleep(min(every, max(deadline - time.monotonic(), 0.0)))


# No setting bounds how long `python -m local` takes to start (moto server, every resource, the
# handler imports): this is the budget a slow machine gets before a test calls it broken.
STARTUP_BUDGET_SECONDS = 60.0


def stack_environment(port: int, moto_port: int, settings: Mapping[str, str]) -> dict[str, str]:
    """This environment without AWS, stack or Powertools settings and without PYTHONPATH
    (``python -m local`` must find functions/ by itself), then the two ports and ``settings``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "SENDLEDGER_", "POWERTOOLS_"))}
    env.pop("PYTHONPATH", None)
    env.update({"SENDLEDGER_PORT": str(port), "SENDLEDGER_MOTO_PORT": str(moto_port), "PYTHONUNBUFFERED": "1"})
    env.update(settings)
    return env


def await_healthy(process: subprocess.Popen[bytes], url: str, output: Callable[[], str]) -> None:
    """Until the stack at ``url`` answers /healthz with 200; fails with ``output()`` (its log) if
    the process exits first or the startup budget runs out."""

    def healthz() -> int:
        if process.poll() is not None:
            pytest.fail(f"python -m local exited early:\n{output()}")
        return requests.get(f"{url}/healthz", timeout=REQUEST_TIMEOUT_SECONDS).status_code

    wait_until(
        healthz,
        STARTUP_BUDGET_SECONDS,
        lambda: f"{url}/healthz to answer 200:\n{output()}",
        done=lambda status: status == 200,
        retry_on=(requests.ConnectionError,),
    )


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    with mock_aws():
        yield


@pytest.fixture
def resources(aws: None) -> Resources:
    return create_resources()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
def simulator(resources: Resources, clock: FakeClock) -> Iterator[Simulator]:
    sim = Simulator.install(
        ses_topic_arn=resources.ses_events_topic_arn,
        sms_success_log_group=resources.sms_success_log_group,
        sms_failure_log_group=resources.sms_failure_log_group,
        clock=clock.now,
    )
    yield sim
    sim.uninstall()


def sesv2_client() -> Any:
    return boto3.client("sesv2", config=NO_RETRIES)


def sns_client() -> Any:
    return boto3.client("sns", config=NO_RETRIES)


def send_email(to: str, *, message_id: str = "msg_01TEST", subject: str = "Hello") -> Any:
    return sesv2_client().send_email(
        FromEmailAddress=SENDER_EMAIL,
        Destination={"ToAddresses": [to]},
        Content={
            "Simple": {
                "Subject": {"Data": subject},
                "Body": {"Text": {"Data": "plain body"}, "Html": {"Data": "<p>html body</p>"}},
            }
        },
        ConfigurationSetName=CONFIGURATION_SET,
        EmailTags=[{"Name": SES_MESSAGE_ID_TAG, "Value": message_id}],
    )


def send_sms(phone: str, text: str = "alert: disk full") -> Any:
    return sns_client().publish(
        PhoneNumber=phone,
        Message=text,
        MessageAttributes={"AWS.SNS.SMS.SMSType": {"DataType": "String", "StringValue": "Transactional"}},
    )


def drain_ses_events(resources: Resources) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(SNS envelope, SES record) pairs from the SES events queue, in order, until a receive is empty.

    Deleted messages never come back; one left undeleted would only reappear after the queue's
    visibility timeout, so a drain not done within it is one that something keeps refilling.
    """
    sqs = boto3.client("sqs")
    url = resources.ses_events_queue_url
    visibility = float(
        sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])["Attributes"]["VisibilityTimeout"]
    )
    found: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def receive() -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
        for message in messages:
            envelope = json.loads(message["Body"])
            found.append((envelope, json.loads(envelope["Message"])))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        return messages

    wait_until(receive, visibility, "an empty receive from the SES events queue", done=lambda batch: not batch, every=0)
    return found
