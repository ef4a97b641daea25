"""The status publisher against moto: the ledger's stream, the bus, the events list."""

from __future__ import annotations

from collections import Counter
from typing import Any

from local.status_out import StatusOut, create_status_out_resources
from sendledger import bootstrap
from sendledger.domain.callers import CallerId
from sendledger.handlers import callbacks, publisher
from sendledger.settings import Settings
from tests.support.fakes import FakeLambdaContext

BUS = "sendledger-test"
REGION = "us-east-1"


def status_out_harness(
    settings: Settings,
    *,
    clock: Any = None,
    endpoint: Any = None,
    resolver: Any = None,
    with_callbacks: bool = False,
) -> tuple[StatusOut, bootstrap.StatusOut]:
    """Inside mock_aws, over the ledger table `settings` names (created with its stream). The
    test receivers listen on loopback: the local stack's allowance is on, as it is locally."""
    settings = settings.replace({"event_bus_name": BUS, "callback_allow_loopback": True})
    resources = create_status_out_resources(
        table_name=settings.table_name,
        bus_name=BUS,
        max_attempts=settings.callback_max_attempts,
        region=REGION,
    )
    runtime = bootstrap.build_status_out(settings)
    if clock is not None:
        runtime.clock = clock
        runtime.receivers.callers.clock = clock  # type: ignore[attr-defined]
        runtime.receivers.secrets.clock = clock  # type: ignore[attr-defined]
    if endpoint is not None:
        runtime.receivers.endpoint = endpoint
    if resolver is not None:
        runtime.receivers.resolver = resolver
    pump = StatusOut(
        resources=resources,
        region=REGION,
        publisher=lambda event, context: publisher.lambda_handler(event, context, runtime),
        callbacks=(lambda event, context: callbacks.lambda_handler(event, context, runtime))
        if with_callbacks
        else None,
        make_context=FakeLambdaContext,
    )
    return pump, runtime


def by_message(events: list[dict[str, Any]], message_id: str) -> list[dict[str, Any]]:
    return [e for e in events if e["detail"].get("message_id") == message_id]


def states(events: list[dict[str, Any]], message_id: str) -> list[tuple[str | None, str]]:
    return [(e["detail"]["previous_state"], e["detail"]["state"]) for e in by_message(events, message_id)]


def duplicated_ids(events: list[dict[str, Any]]) -> dict[str, int]:
    """Ids published with different details (one id is one change, however often it is put)."""
    details: dict[str, set[str]] = {}
    for event in events:
        detail = {k: v for k, v in event["detail"].items() if k != "previous_state"}
        details.setdefault(event["detail"]["event_id"], set()).add(repr(sorted(detail.items())))
    return {event_id: len(d) for event_id, d in details.items() if len(d) > 1}


def id_counts(events: list[dict[str, Any]]) -> Counter[str]:
    return Counter(e["detail"]["event_id"] for e in events)


def register_receiver(settings: Settings, caller: CallerId, url: str, secret: str, previous: str | None = None) -> None:
    """What an admin's `PUT /v1/admin/callers/<caller>` leaves behind: the caller's item and its
    secret (the current one, and the previous one while a rotation is open)."""
    from sendledger.adapters.callback_secrets import SecretsManagerCallbackSecrets
    from sendledger.adapters.dynamodb.caller_settings import DynamoCallerSettings
    from sendledger.adapters.dynamodb.table import Table
    from sendledger.domain.callbacks import SigningKeys
    from sendledger.domain.caller_settings import CallerSettings
    from sendledger.domain.clock import SystemClock

    clock = SystemClock()
    SecretsManagerCallbackSecrets(settings.callback_secret_prefix, clock).put(
        caller, SigningKeys(secret, previous, clock.now() if previous else None)
    )
    store = DynamoCallerSettings(Table(settings.table_name), clock)
    store.put(CallerSettings(caller, url, updated_at=clock.now()))
