"""What a send writes, in requests and write units as DynamoDB bills them (counted: deterministic).

Sizes are realistic (a UUID key, a 40-character address, a long body): an item past 1 KB costs
another unit on every write of it, and a cancelled transaction is billed as attempted
(benchmarks/capacity.py holds the billing rules, with their sources).
"""

from datetime import timedelta

import boto3
import pytest

from benchmarks.counting import counting
from local.status_out import stream_event
from sendledger.adapters.dynamodb.keys import MESSAGE_SK, message_pk
from sendledger.adapters.dynamodb.message_items import params_fields, params_from
from sendledger.domain.eligibility import StalePolicy
from sendledger.domain.watermarks import WATERMARK_CACHE
from tests.conftest import PRINCIPAL, TABLE
from tests.support.fakes import FakeLambdaContext, caller_id
from tests.support.fixtures import put_watermark
from tests.support.status_out import status_out_harness
from tests.support.templates import warm_templates

KEY = "9f0c1d2e-3b4a-4c5d-8e6f-7a8b9c0d1e2f"
TO = "jonathan.whitmore-smith@examplecorp.com"
BODY = (
    "Your order 1048577 has shipped and will arrive on Thursday. Tracking number 1Z999AA10123456784, "
    "carrier estimated delivery window 9:00-13:00. " * 4
)


def notice(to=TO, body=BODY):
    return {
        "channel": "email",
        "to": to,
        "template": {"id": "notice", "version": "1"},
        "params": {"subject": "Your order has shipped", "body": body},
    }


def units(log):
    return sum(r.capacity["write_request_units"] for r in log.requests)


def stored(message_id):
    item = boto3.client("dynamodb").get_item(
        TableName=TABLE, Key={"pk": {"S": message_pk(message_id)}, "sk": {"S": MESSAGE_SK}}
    )
    return item["Item"]


def test_a_send_with_a_long_body_stays_at_two_requests_and_eight_units(
    api, services, warm_watermarks, warm_caller_settings, warm_templates
):
    with counting(services.messages) as log:
        status, _, view = api("POST", "/v1/messages", notice(), headers={"Idempotency-Key": KEY})
    assert status == 202 and view["state"] == "accepted"
    # The intent (2 items, 2 units each), its two index entries, the outcome (1), the in-flight marker's removal (1)
    assert log.summary() == ["TransactWriteItems(2)/200", "UpdateItem(1)/200"] and units(log) == 8
    # Accepted and not escalating: never rendered again, so the params are gone; the evidence is not
    from benchmarks.capacity import item_size

    item = stored(view["message_id"])
    assert "params" not in item and "params_z" not in item and item_size(item) <= 1024
    status, _, shown = api("GET", f"/v1/messages/{view['message_id']}")
    assert status == 200 and [entry["type"] for entry in shown["history"]] == ["intent", "provider_outcome"]
    assert shown["history"][1]["provider_message_id"] == view["provider_message_id"]


def test_a_replay_is_one_cancelled_transaction_billed_as_attempted(api, services, warm_watermarks):
    api("POST", "/v1/messages", notice(), headers={"Idempotency-Key": KEY})
    with counting(services.messages) as log:
        status, headers, _ = api("POST", "/v1/messages", notice(), headers={"Idempotency-Key": KEY})
    assert status == 202 and headers["idempotent-replayed"] == "true"
    # Both items of the intent, 2 units each: the floor of a two-item intent that detects replays
    assert log.summary() == ["TransactWriteItems(2)/400"] and units(log) == 4


def test_a_container_reads_a_watermark_older_than_its_cache_once_after_an_intent_and_never_for_a_replay(
    api, services, clock, warm_watermarks, warm_caller_settings
):
    # Given a container whose watermark read is older than the cache's age
    clock.advance(WATERMARK_CACHE.total_seconds())
    put_watermark(TABLE, "ses", clock.now())
    services.caller_settings.get(caller_id(PRINCIPAL))  # its caller settings cache is warm all the same
    warm_templates(api)  # and its caller's template listing
    # When a send's client retries it, then it sends again
    with counting(services.messages) as log:
        api("POST", "/v1/messages", notice(body="first"), headers={"Idempotency-Key": "first"})
        api("POST", "/v1/messages", notice(body="first"), headers={"Idempotency-Key": "first"})
        api("POST", "/v1/messages", notice(body="again"), headers={"Idempotency-Key": "again"})
    # Then the first send labels against the watermark it knew and reads it again once its intent is
    # written; the replay and the next send read nothing
    assert log.summary() == [
        "TransactWriteItems(2)/200",
        "GetItem(1)/200",
        "UpdateItem(1)/200",
        "TransactWriteItems(2)/400",
        "TransactWriteItems(2)/200",
        "UpdateItem(1)/200",
    ]


def test_a_repeat_recipient_inside_the_window_costs_a_first_send_and_is_labelled_from_the_stream(
    api, services, clock, warm_watermarks
):
    pump = status_out_harness(services.settings)[0]
    # Given a recipient mailed ten seconds ago, under the default policy (allow)
    status, _, first = api("POST", "/v1/messages", notice(body="first"), headers={"Idempotency-Key": "first"})
    clock.advance(10)
    # When it is mailed again
    with counting(services.messages) as log:
        status, _, view = api("POST", "/v1/messages", notice(body="again"), headers={"Idempotency-Key": "again"})
    # Then nothing is cancelled or repeated: the recipient's update records what the label needs
    assert status == 202 and view["state"] == "accepted"
    assert log.summary() == ["TransactWriteItems(2)/200", "UpdateItem(1)/200"] and units(log) == 8
    # And the publisher labels each send from the stream: the first eligible, the second stale
    records = list(pump.stream.batch())
    with counting(services.messages) as labelling:
        pump.pump()
    assert labelling.summary().count("UpdateItem(1)/200") == 2 and units(labelling) == 2
    labels = {}
    for message in (first, view):
        history = api("GET", f"/v1/messages/{message['message_id']}")[2]["history"]
        assert [entry["type"] for entry in history] == ["intent", "eligibility", "provider_outcome"]
        assert "eligibility" not in history[0] and history[0]["stale_policy"] == "allow"
        labels[message["message_id"]] = history[1]
    label = {"type": "eligibility", "state": None}
    assert labels[first["message_id"]] == {**label, "at": first["created_at"], "eligibility": "eligible"}
    assert labels[view["message_id"]] == {
        **label,
        "at": view["created_at"],
        "eligibility": "eligible_stale",
        "previous_send_age_seconds": 10.0,
    }
    # Handled again (a stream batch retried): the same labels, nothing written twice
    before = [stored(message["message_id"]) for message in (first, view)]
    with counting(services.messages) as again:
        pump.publisher(stream_event(records), FakeLambdaContext())
    assert again.summary().count("UpdateItem(1)/400") == 2
    assert [stored(message["message_id"]) for message in (first, view)] == before


def test_under_defer_a_repeat_recipient_outside_the_window_takes_the_optimistic_path_with_an_old_watermark(
    api, services, clock, healthy_watermarks, deferring
):
    # Given a recipient mailed an hour ago, and a container whose one watermark read is 40 minutes old
    api("POST", "/v1/messages", notice(body="first"), headers={"Idempotency-Key": "first"})
    clock.advance(20 * 60)
    put_watermark(TABLE, "ses", clock.now())
    services.poller_state.recent_watermark("ses", clock.now())  # the container's read
    clock.advance(40 * 60)
    put_watermark(TABLE, "ses", clock.now())
    warm_templates(api)  # a busy container: it looked the caller's template up within its cache period
    services.caller_settings.get(caller_id(PRINCIPAL))  # and its settings
    # When it is mailed again
    with counting(services.messages) as log:
        status, _, view = api("POST", "/v1/messages", notice(body="again"), headers={"Idempotency-Key": "again"})
    # Then the old watermark still proves the last send knowable: no read, no cancelled write
    assert status == 202 and view["state"] == "accepted"
    assert log.summary() == ["TransactWriteItems(2)/200", "UpdateItem(1)/200"]


def test_under_defer_a_repeat_recipient_inside_the_window_is_decided_exactly(
    api, services, clock, healthy_watermarks, deferring
):
    # Given a recipient mailed ten seconds ago, in a container that read the watermark since
    api("POST", "/v1/messages", notice(body="first"), headers={"Idempotency-Key": "first"})
    services.poller_state.recent_watermark("ses", clock.now())
    clock.advance(10)
    with counting(services.messages) as log:
        status, _, view = api("POST", "/v1/messages", notice(body="again"), headers={"Idempotency-Key": "again"})
    # Then its optimistic write is turned away (it hands back the recipient item) and the pending decision lands
    assert status == 202 and view["state"] == "pending"
    assert log.summary() == ["TransactWriteItems(2)/400", "PutItem(1)/200"]
    history = api("GET", f"/v1/messages/{view['message_id']}")[2]["history"]
    assert history[0]["eligibility"] == "eligible_stale" and history[0]["stale_policy"] == "defer"


@pytest.fixture
def deferring(services):
    services.settings = services.settings.replace({"stale_eligibility_policy": {"transactional": StalePolicy.DEFER}})


@pytest.mark.parametrize("params", [{"summary": "short"}, {"subject": "s", "body": BODY}, {"a": "é" * 300}])
def test_params_read_back_as_written(params):
    fields = params_fields(params)
    item = {name: ({"B": value} if isinstance(value, bytes) else {"S": value}) for name, value in fields.items()}
    assert params_from(item) == params
    assert ("params_z" in fields) == (len(str(params)) > 200)


def test_an_old_watermark_is_kept_not_refreshed(services, clock, healthy_watermarks):
    services.poller_state.recent_watermark("ses", clock.now())
    read_at = clock.now()
    clock.advance(timedelta(hours=2).total_seconds())
    assert services.poller_state.known_watermark("ses") == read_at
