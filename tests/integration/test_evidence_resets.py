"""GET /v1/password-resets/{reset_id} and resets whose address changes, through the handler on moto."""

import re

import boto3
import pytest

from tests.conftest import TABLE
from tests.support.fakes import ADMIN
from tests.support.outbox import sent_emails

LINK = re.compile(r"reset\?token=([A-Za-z0-9_-]+)")


def request(api, email, account="acct-1"):
    return api("POST", "/v1/password-resets", {"account_id": account, "email": email})


def consume(api, token, account="acct-1"):
    return api("POST", "/v1/password-resets/consume", {"account_id": account, "token": token})


@pytest.fixture
def mailed(ingestion):
    def run():
        ingestion.poll()
        return [(m.destinations["ToAddresses"][0], LINK.search(m.body).group(1)) for m in sent_emails()]

    return run


def test_a_corrected_email_gets_a_new_reset_and_the_old_token_dies(api, clock, mailed, healthy_watermarks):
    # Given a reset mailed to a mistyped address
    _, _, first = request(api, "bob@exmaple.com")
    [(_, old_token)] = mailed()
    # When the user corrects the address inside the window
    clock.advance(20)
    status, _, second = request(api, "bob@example.com")
    # Then a new reset: the old token is refused at once, the new address gets its own link
    assert status == 202 and second["reset_id"] != first["reset_id"]
    assert consume(api, old_token)[0] == 400
    sent = mailed()
    assert [to for to, _ in sent] == ["bob@exmaple.com", "bob@example.com"]
    status, _, body = consume(api, sent[1][1])
    assert status == 200 and body["reset_id"] == second["reset_id"]
    # And the evidence of each says what happened, with no token or hash anywhere
    status, _, old = api("GET", f"/v1/password-resets/{first['reset_id']}")
    assert status == 200 and old["state"] == "replaced" and old["replaced_by"] == second["reset_id"]
    assert old["token_versions"][0]["invalidated_because"].startswith("reset replaced")
    status, _, new = api("GET", f"/v1/password-resets/{second['reset_id']}")
    assert new["state"] == "consumed" and new["replaces"] == first["reset_id"]
    [version] = new["token_versions"]
    assert version["version"] == 1 and version["invalidated_because"] == "consumed"
    [message] = new["messages"]
    # (the fake clock stands still: request and mail share a millisecond, so no order between them)
    assert message["state"] == "accepted"
    assert {"reset_requested", "reset_mail"} <= {entry["type"] for entry in message["history"]}
    text = str(old) + str(new)
    assert old_token not in text and sent[1][1] not in text and "token_hash" not in text


def test_one_active_token_per_account_on_the_table(api, clock, mailed, healthy_watermarks):
    request(api, "a@example.com")
    mailed()
    request(api, "b@example.com")
    mailed()
    resets = [i for i in boto3.client("dynamodb").scan(TableName=TABLE)["Items"] if i["pk"]["S"].startswith("RESET#")]
    assert len(resets) == 1 and resets[0]["state"]["S"] == "active"


def test_reset_evidence_is_caller_scoped(api, mailed, healthy_watermarks):
    _, _, reset = request(api, "bob@example.com")
    mailed()
    assert api("GET", f"/v1/password-resets/{reset['reset_id']}", principal=ADMIN)[0] == 404
    assert api("GET", "/v1/password-resets/rst_nope")[0] == 404
    status, headers, _ = api("GET", "/v1/password-resets/consume")
    assert status == 405 and headers["allow"] == "POST"
