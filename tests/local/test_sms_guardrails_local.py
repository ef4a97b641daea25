"""The SMS guardrails as `make run` serves them: a local caller limited to GB by
SENDLEDGER_LOCAL_CALLER_SETTINGS and capped at 20 segments a day, spoken to over HTTP only."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from local.constants import LOCAL_PRINCIPAL
from sendledger.domain.callers import caller_of
from sendledger.domain.sms_guardrails import seconds_to_next_day
from tests.local.local_support import REQUEST_TIMEOUT_SECONDS, wait_until
from tests.local.test_local_stack_http import STACK_SETTINGS, StackProcess, running_stack

RULES = {"sms_countries": {"allow": ["GB"]}, "sms_daily_segments": 20}
GB, US = "+447400123456", "+12015550123"
COUNT_BUDGET_SECONDS = 30.0  # the stack's publisher pumps the stream every second or two


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StackProcess]:
    settings = {**STACK_SETTINGS, "SENDLEDGER_LOCAL_CALLER_SETTINGS": json.dumps(RULES)}
    with running_stack(tmp_path_factory, "sms-guardrails", settings) as running:
        yield running


def sms(url: str, to: str, key: str, summary: str = "disk full") -> requests.Response:
    body = {"channel": "sms", "to": to, "template": {"id": "alert", "version": "1"}, "params": {"summary": summary}}
    headers = {"Idempotency-Key": key}
    return requests.post(f"{url}/v1/messages", json=body, headers=headers, timeout=REQUEST_TIMEOUT_SECONDS)


def local_caller(url: str) -> dict[str, Any]:
    """The console's view of the caller unsigned requests are (the local principal's)."""
    views = requests.get(f"{url}/local/callers", timeout=REQUEST_TIMEOUT_SECONDS).json()
    (caller,) = [view for view in views if view["caller_id"] == caller_of(LOCAL_PRINCIPAL, {}).id]
    return caller  # type: ignore[no-any-return]


def test_gb_only_caller_capped_at_20_segments_as_the_readme_promises(guarded: StackProcess) -> None:
    url = guarded.url
    refused = sms(url, US, "us-1")
    assert refused.status_code == 422 and refused.headers["Content-Type"] == "application/problem+json"
    assert refused.json()["type"].endswith("/sms-country-not-allowed") and "US" in refused.json()["detail"]
    accepted = sms(url, GB, "gb-1")
    assert accepted.status_code == 202, accepted.text
    assert accepted.json()["sms"] == {"encoding": "GSM-7", "segments": 1}
    unicode = sms(url, GB, "gb-unicode", "Ünïcödé ⚠ " * 19 + "✓" * 3)  # "ALERT: " + this: 200 characters
    assert unicode.status_code == 202 and unicode.json()["sms"] == {"encoding": "UCS-2", "segments": 3}
    read = requests.get(f"{url}/v1/messages/{unicode.json()['message_id']}", timeout=REQUEST_TIMEOUT_SECONDS).json()
    assert read["sms"] == {"encoding": "UCS-2", "segments": 3} and read["history"][0]["sms_segments"] == 3
    for number in range(16):  # 1 + 3 + 16 = the 20 segments of the cap
        assert sms(url, GB, f"gb-{number + 2}").status_code == 202
    caller = wait_until(
        lambda: local_caller(url),
        COUNT_BUDGET_SECONDS,
        lambda: "the publisher to count 20 segments",
        done=lambda view: view["sms_segments_today"] == 20,
    )
    assert caller["sms_countries"] == {"allow": ["GB"]} and caller["sms_daily_segments"] == 20
    assert caller["history"][0]["actor"] == "local-stack"
    most = seconds_to_next_day_now()  # read before the request: the stack's answer, rounded up, is at most this
    capped = sms(url, GB, "gb-21")
    assert capped.status_code == 429 and capped.json()["type"].endswith("/sms-cap-reached")
    assert 0 < int(capped.headers["Retry-After"]) <= most
    page = requests.get(f"{url}/local/console/console.js", timeout=REQUEST_TIMEOUT_SECONDS).text
    assert "#/callers" in page and "sms_segments_today" in page


def seconds_to_next_day_now() -> int:
    from datetime import UTC, datetime

    return seconds_to_next_day(datetime.now(UTC))
