"""What template lookups cost on the send and reset paths, counted (deterministic) through the
real api handler on moto: one GetItem the first time a container needs a version, none after
it within TEMPLATE_CACHE_SECONDS; a replay none; a reset request one GetItem the first time.

Each test starts from a container whose caller settings and watermarks are warm (their own
reads are counted in test_test_mode.py and test_send_capacity.py) and whose template catalog
is new (tests/support/templates.py new_container), so what is counted beyond the send's two
requests is the template's alone.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.counting import count_dynamodb_requests
from tests.support.fakes import FakeClock
from tests.support.outbox import sent_emails
from tests.support.templates import new_container

SEND, REPLAY, RESET = 2, 1, 2  # tests/reliability/test_request_budget.py, warm
TEMPLATE_CACHE_SECONDS = 300  # the setting's default (settings.py)
WELCOME = {"params": ["name"], "email": {"subject": "Hi ${name}", "text": "Hello ${name}"}}
RESET_MAIL = {"params": ["reset_link"], "email": {"subject": "Your own reset", "text": "Open ${reset_link}"}}

pytestmark = pytest.mark.usefixtures("healthy_watermarks", "warm_watermarks", "warm_caller_settings")


def send(api: Any, key: str, template_id: str = "alert", **changes: Any) -> tuple[int, dict[str, str], Any]:
    params = {"summary": "disk full"} if template_id == "alert" else {"name": "Ana"}
    body = {
        "channel": "email",
        "to": "ana@example.com",
        "template": {"id": template_id, "version": "1"},
        "params": params,
        **changes,
    }
    return api("POST", "/v1/messages", body, headers={"Idempotency-Key": key})


def counted(call: Any) -> tuple[Any, dict[str, int]]:
    with count_dynamodb_requests() as counter:
        answer = call()
    return answer, dict(counter.operations)


@pytest.mark.parametrize("template_id", ["alert", "welcome"], ids=["deployment's", "caller's own"])
def test_a_send_reads_its_version_once_per_container_then_never(api: Any, template_id: str) -> None:
    if template_id == "welcome":
        assert api("PUT", "/v1/templates/welcome/versions/1", WELCOME)[0] == 201
    new_container(api.runtime)
    (status, _, _), first = counted(lambda: send(api, "k-0", template_id))
    assert status == 202
    # The send's transaction and outcome, and one GetItem: the caller's item for this version
    # (its words, or that it has none and the deployment's is used).
    assert first == {"TransactWriteItems": 1, "UpdateItem": 1, "GetItem": 1}
    assert api.runtime.catalog.reads == 1
    for n in range(1, 6):
        (status, _, _), after = counted(lambda n=n: send(api, f"k-{n}", template_id))
        assert status == 202 and sum(after.values()) == SEND, after
    assert api.runtime.catalog.reads == 1


def test_a_replay_makes_no_template_read(api: Any) -> None:
    new_container(api.runtime)
    status, _, view = send(api, "k-replayed")
    assert status == 202
    reads = api.runtime.catalog.reads
    (status, headers, replayed), operations = counted(lambda: send(api, "k-replayed"))
    assert status == 202 and headers["idempotent-replayed"] == "true" and replayed == view
    assert sum(operations.values()) == REPLAY, operations
    assert api.runtime.catalog.reads == reads


def test_a_reset_request_reads_the_callers_reset_mail_once(api: Any) -> None:
    new_container(api.runtime)
    body = {"account_id": "acct-1", "email": "bob@example.com"}
    (status, _, _), first = counted(lambda: api("POST", "/v1/password-resets", body))
    assert status == 202
    # The reset's transaction, and one GetItem: the caller's reset-mail pointer (it has none).
    assert first.pop("GetItem") == 1 and sum(first.values()) <= RESET, first
    (status, _, _), again = counted(lambda: api("POST", "/v1/password-resets", {**body, "account_id": "acct-2"}))
    assert status == 202 and "GetItem" not in again and sum(again.values()) <= RESET, again
    assert api.runtime.catalog.reads == 1


def test_a_callers_own_reset_mail_is_one_read_words_included(api: Any, ingestion: Any) -> None:
    status, _, published = api("PUT", "/v1/templates/password-reset/versions/1", RESET_MAIL)
    assert status == 201
    new_container(api.runtime)
    body = {"account_id": "acct-1", "email": "bob@example.com"}
    (status, _, _), first = counted(lambda: api("POST", "/v1/password-resets", body))
    assert status == 202 and first.pop("GetItem") == 1 and sum(first.values()) <= RESET, first
    ingestion.poll()  # the poller's mailer renders the version the reset recorded
    (mail,) = sent_emails()
    assert mail.subject == "Your own reset"


def test_a_publish_elsewhere_reaches_a_warm_container_within_the_cache_period(api: Any, clock: FakeClock) -> None:
    """A caller's version shadowing the deployment's `alert` v1, published by another container:
    this one, which remembered "none of its own", sends the deployment's until its answer is
    TEMPLATE_CACHE_SECONDS old, then the caller's (docs/templates.md)."""
    new_container(api.runtime)
    assert send(api, "k-before")[0] == 202
    mine = {"params": ["summary"], "email": {"subject": "Mine: ${summary}", "text": "${summary}"}}
    other = api.runtime.template_library()  # this container's routes would refresh its cache: not theirs
    assert other.store.put_new(_stored(api, "alert", mine)) is None
    clock.advance(TEMPLATE_CACHE_SECONDS - 1)
    assert "owner" not in send(api, "k-within")[2]["template"]  # the deployment's
    clock.advance(1)
    status, _, view = send(api, "k-after")
    assert status == 202 and view["template"]["owner"] == "caller"


def _stored(api: Any, template_id: str, body: dict[str, Any]) -> Any:
    from sendledger.domain.template_rules import parse_version
    from sendledger.ports.templates import StoredVersion
    from tests.support.fakes import CALLER

    parsed = parse_version(template_id, "1", body).version
    assert parsed is not None
    return StoredVersion(CALLER, parsed, published_at=api.runtime.clock.now())
