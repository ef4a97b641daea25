"""Caller settings as ledger items (moto): defaults, a whole write, the version, the cache."""

from __future__ import annotations

from dataclasses import replace

import boto3

from sendledger.adapters.dynamodb.caller_settings import DynamoCallerSettings
from sendledger.adapters.dynamodb.table import Table
from sendledger.bootstrap import Runtime
from sendledger.domain.caller_settings import CALLER_SETTINGS_CACHE, CallerSettings
from sendledger.domain.callers import CallerId
from tests.conftest import TABLE
from tests.support.fakes import FakeClock

A = CallerId("c" * 24)


def test_items_round_trip_with_a_version_and_removed_fields(aws: None, clock: FakeClock) -> None:
    store = DynamoCallerSettings(Table(TABLE), clock)
    assert store.get(A) == CallerSettings(A)
    written = CallerSettings(
        A, "https://hooks.example.com/x", True, {"plan": "gold"}, clock.now(), "arn:aws:iam::1:role/admin"
    )
    stored = store.put(written)
    assert stored == replace(written, version=1)
    other = DynamoCallerSettings(Table(TABLE), clock)  # another container: reads the item
    assert other.get(A) == stored
    assert store.put(replace(stored, callback_url=None, flag_context={})).version == 2
    item = boto3.client("dynamodb").get_item(TableName=TABLE, Key={"pk": {"S": f"CALLER#{A}"}, "sk": {"S": "SETTINGS"}})
    assert "callback_url" not in item["Item"] and item["Item"]["version"] == {"N": "2"}
    assert other.get(A).callback_url == "https://hooks.example.com/x"  # cached in that container
    clock.advance(CALLER_SETTINGS_CACHE.total_seconds())
    assert other.get(A) == CallerSettings(A, None, True, {}, clock.now() - CALLER_SETTINGS_CACHE, stored.updated_by, 2)


def test_the_runtimes_settings_cache_expires_on_the_runtimes_clock(services: Runtime, clock: FakeClock) -> None:
    """The composition root's caller settings cache on the clock it was given: a runtime on a fake
    clock sees a change once that clock has moved past the cache, not once the wall clock has."""
    assert services.caller_settings.get(A).callback_url is None
    DynamoCallerSettings(Table(TABLE), clock).put(CallerSettings(A, "https://hooks.example.com/new"))
    assert services.caller_settings.get(A).callback_url is None  # cached in this container
    clock.advance(CALLER_SETTINGS_CACHE.total_seconds())
    assert services.caller_settings.get(A).callback_url == "https://hooks.example.com/new"
