"""Feature flags on the send path, through the real handler against moto: the composition root's
file store, per-caller decisions, the first history entry, and what evaluation costs."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from sendledger import bootstrap
from sendledger.bootstrap import Runtime
from sendledger.settings import FlagStore
from tests.support.counting import count_dynamodb_requests
from tests.support.fakes import caller_id
from tests.support.outbox import sent_emails
from tests.support.templates import warm_templates

STRICT = "arn:aws:iam::123456789012:role/strict-app"  # the one caller a rule names
OTHER = "arn:aws:iam::123456789012:role/relaxed-app"
ALERT = {
    "channel": "email",
    "to": "alice@example.com",
    "template": {"id": "alert", "version": "1"},
    "category": "alert",
}


def flag(rules: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"default": "deployment", "boolean_type": False, **({"rules": rules} if rules else {})}


def for_callers(value: Any, *principals: str) -> dict[str, Any]:
    ids = [caller_id(principal) for principal in principals]
    return {"named callers": {"when_match": value, "conditions": [{"action": "IN", "key": "caller", "value": ids}]}}


def use_flags(services: Runtime, path: Path, flags: dict[str, Any]) -> None:
    """The flags file the composition root reads (FLAGS_STORE=file, FLAGS_FILE=path)."""
    path.write_text(json.dumps(flags))
    services.settings = services.settings.replace({"flags_file": str(path)})
    services.flags = bootstrap.feature_flags(services.settings)


def send(api, key: str, principal: str, to: str = "alice@example.com") -> tuple[int, dict[str, Any]]:
    body = {**ALERT, "to": to, "params": {"summary": key}}
    status, _, view = api("POST", "/v1/messages", body, headers={"Idempotency-Key": key}, principal=principal)
    return status, view


def first_entry(api, view: dict[str, Any], principal: str) -> dict[str, Any]:
    status, _, found = api("GET", f"/v1/messages/{view['message_id']}", principal=principal)
    assert status == 200
    entry: dict[str, Any] = found["history"][0]
    return entry


def warm_settings(services: Runtime) -> None:
    """Both callers' settings are in this container's cache, as after their first sends (that
    read, one GetItem per caller and CALLER_SETTINGS_CACHE: tests/integration/test_test_mode.py)."""
    for principal in (STRICT, OTHER):
        services.caller_settings.get(caller_id(principal))


@pytest.fixture
def stale_policy_flags(services: Runtime, tmp_path: Path) -> None:
    flags = {
        "email_provider": flag(),
        "stale_eligibility_policy": flag(for_callers({"alert": "defer"}, STRICT)),
    }
    use_flags(services, tmp_path / "flags.json", flags)


def test_the_stale_policy_is_per_caller_and_the_first_entry_records_it(api, clock, stale_policy_flags):
    # Both callers just mailed Alice and no watermark says her outcome is knowable: both sends are stale
    assert send(api, "earlier-strict", STRICT)[0] == send(api, "earlier-relaxed", OTHER)[0] == 202
    clock.advance(30)
    status, deferred = send(api, "strict-1", STRICT)
    assert status == 202 and deferred["state"] == "pending"
    status, sent = send(api, "relaxed-1", OTHER)
    assert status == 202 and sent["state"] == "accepted"
    assert len(sent_emails()) == 3  # the earlier two and the relaxed caller's, not the strict one's
    strict_entry = first_entry(api, deferred, STRICT)
    assert strict_entry["eligibility"] == "eligible_stale"
    assert strict_entry["flags"] == {"stale_eligibility_policy": "defer"}
    # The relaxed caller's send was decided by the deployment's settings alone: nothing recorded
    assert "flags" not in first_entry(api, sent, OTHER)


def test_flags_cost_no_dynamodb_request_and_the_file_is_read_once(
    api, services, healthy_watermarks, stale_policy_flags
):
    send(api, "warm", OTHER)  # the first send reads the store
    warm_settings(services)
    warm_templates(api, STRICT, OTHER)
    reads = services.flags.flags.store.reads  # type: ignore[attr-defined]
    for number in range(5):
        with count_dynamodb_requests() as counter:
            status, view = send(api, f"budget-{number}", STRICT if number % 2 else OTHER, f"r{number}@example.com")
        assert status == 202 and view["state"] == "accepted"
        assert counter.total == 2, counter.operations  # the send path's budget, flags or not
    assert services.flags.flags.store.reads == reads == 1  # type: ignore[attr-defined]


def test_the_appconfig_store_is_asked_once_per_ttl_not_once_per_send(api, services, warm_watermarks):
    """Deployed: AppConfigStore over the appconfigdata API (moto has no data plane: a botocore
    Stubber answers the two calls a cold container makes, and would fail any third)."""
    import boto3
    from botocore.response import StreamingBody
    from botocore.stub import Stubber

    content = json.dumps({"email_provider": flag(), "stale_eligibility_policy": flag(for_callers("defer", STRICT))})
    client = boto3.client("appconfigdata", region_name="us-east-1")
    calls: list[str] = []
    client.meta.events.register("before-parameter-build", lambda model, **_: calls.append(model.name))
    ids = {
        "ApplicationIdentifier": "app1234",
        "EnvironmentIdentifier": "env1234",
        "ConfigurationProfileIdentifier": "prof123",
    }
    stubber = Stubber(client)
    stubber.add_response("start_configuration_session", {"InitialConfigurationToken": "token-1"}, ids)
    stubber.add_response(
        "get_latest_configuration",
        {
            "NextPollConfigurationToken": "token-2",
            "NextPollIntervalInSeconds": 60,
            "ContentType": "application/json",
            "Configuration": StreamingBody(io.BytesIO(content.encode()), len(content)),
        },
        {"ConfigurationToken": "token-1"},
    )
    services.settings = services.settings.replace(
        {
            "flags_store": FlagStore.APPCONFIG,
            "flags_appconfig_application": "app1234",
            "flags_appconfig_environment": "env1234",
            "flags_appconfig_profile": "prof123",
        }
    )
    warm_settings(services)
    with stubber:
        services.flags = bootstrap.feature_flags(services.settings, appconfig_client=client)
        warm_templates(api, STRICT, OTHER)  # after the part's replacement: its flows, the catalog, are new
        for number in range(6):
            with count_dynamodb_requests() as counter:
                status, view = send(
                    api, f"appconfig-{number}", STRICT if number % 2 else OTHER, f"a{number}@example.com"
                )
            assert status == 202 and view["state"] == "accepted"
            assert counter.total == 2, counter.operations
            assert calls == ["StartConfigurationSession", "GetLatestConfiguration"]  # all made by the first send
        stubber.assert_no_pending_responses()
    assert first_entry(api, view, STRICT)["flags"]["stale_eligibility_policy"] == "defer"
