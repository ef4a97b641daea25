"""Bad input is a 4xx problem+json and writes nothing."""

import json

import boto3
import pytest

from tests.conftest import TABLE
from tests.support.fakes import ADMIN

VALID = {
    "channel": "email",
    "to": "alice@example.com",
    "template": {"id": "alert", "version": "1"},
    "params": {"summary": "x"},
}


def post(api, body=None, raw_body=None, headers=None):
    return api("POST", "/v1/messages", body, raw_body=raw_body, headers={"Idempotency-Key": "k", **(headers or {})})


@pytest.mark.parametrize(
    ("body", "status", "slug"),
    [
        ({**VALID, "surprise": 1}, 400, "validation-error"),
        ({**VALID, "to": "alice@example.com\r\nBcc: eve@example.com"}, 400, "invalid-request"),
        ({**VALID, "to": "not-an-address"}, 400, "invalid-request"),
        ({**VALID, "channel": "sms", "to": "+1206555"}, 400, "invalid-request"),
        ({**VALID, "channel": "sms", "to": "2065550123"}, 400, "invalid-request"),
        ({**VALID, "template": {"id": "nope", "version": "1"}}, 422, "unknown-template"),
        ({**VALID, "template": {"id": "alert", "version": "9"}}, 422, "unknown-template"),
        ({**VALID, "params": {}}, 422, "template-params-invalid"),
        ({**VALID, "params": {"summary": "x", "extra": "y"}}, 422, "template-params-invalid"),
        (
            {**VALID, "template": {"id": "password-reset", "version": "1"}, "params": {"reset_link": "x"}},
            422,
            "template-internal",
        ),
        (
            {**VALID, "channel": "sms", "to": "+12065550123", "template": {"id": "notice", "version": "1"}},
            422,
            "template-channel-unsupported",
        ),
        ({**VALID, "category": "marketing"}, 400, "validation-error"),
        ({**VALID, "template": {"id": "alert", "version": 1}}, 400, "validation-error"),
    ],
)
def test_invalid_bodies(api, body, status, slug):
    code, headers, problem = post(api, body)
    assert code == status, problem
    assert headers["content-type"] == "application/problem+json"
    assert problem["type"].endswith(slug) and problem["status"] == status and problem["detail"]
    assert boto3.client("dynamodb").scan(TableName=TABLE)["Count"] == 0


def test_idn_address_is_accepted_in_ascii_form(api, healthy_watermarks):
    status, _, view = post(api, {**VALID, "to": "joerg@Bücher.example"})
    assert status == 202 and view["to"] == "joerg@xn--bcher-kva.example"


def test_non_ascii_local_part_is_refused(api):
    status, _, problem = post(api, {**VALID, "to": "jörg@example.com"})
    assert status == 400 and problem["type"].endswith("invalid-request")


def test_bad_json_is_400(api):
    status, headers, problem = post(api, raw_body="{not json")
    assert status == 400 and headers["content-type"] == "application/problem+json"


def test_oversize_body_is_413(api):
    status, _, problem = post(api, raw_body='{"x": "' + "a" * 70_000 + '"}')
    assert status == 413 and problem["status"] == 413


def test_wrong_content_type_is_415(api):
    status, _, problem = post(api, VALID, headers={"Content-Type": "text/plain"})
    assert status == 415


def test_bad_idempotency_key_is_400(api):
    status, _, problem = post(api, VALID, headers={"Idempotency-Key": "é" * 3})
    assert status == 400


@pytest.mark.parametrize(
    "key",
    ["", "k" * 256, "k" * 1025, "é" * 3, "a\tb", "a\x7fb", '""', '"a\\b"', '"ab\\"', '"a"b"', '"' + "k" * 256 + '"'],
    ids=["empty", "256", "1025", "non-ascii", "tab", "del", "quoted-empty", "escape", "dangling", "quote", "q256"],
)
def test_bad_idempotency_key_is_a_field_error_like_any_other(api, key):
    # Given the shape a body field error has
    _, _, body_error = post(api, {**VALID, "category": "marketing"})
    # When the key is outside the one limit (1-255 printable ASCII, unquoted)
    status, headers, problem = post(api, VALID, headers={"Idempotency-Key": key})
    # Then the same validation problem, naming the header
    assert status == 400 and headers["content-type"] == "application/problem+json"
    assert set(problem) == set(body_error)
    assert problem["type"] == body_error["type"] and problem["detail"] == body_error["detail"]
    assert [error["field"] for error in problem["errors"]] == ["Idempotency-Key"]
    assert set(problem["errors"][0]) == set(body_error["errors"][0]) == {"field", "message"}
    assert boto3.client("dynamodb").scan(TableName=TABLE)["Count"] == 0


@pytest.mark.parametrize("key", ["k" * 255, '"' + "k" * 255 + '"', '"a\\"b"'], ids=["255", "quoted-255", "escaped"])
def test_idempotency_key_up_to_the_limit_is_accepted(api, healthy_watermarks, key):
    status, _, _ = post(api, VALID, headers={"Idempotency-Key": key})
    assert status == 202


def test_openapi_states_the_idempotency_key_limit_the_server_applies(api):
    from sendledger.domain.idempotency import MAX_KEY_LENGTH

    _, _, doc = api("GET", "/openapi.json")
    (parameter,) = doc["paths"]["/v1/messages"]["post"]["parameters"]
    assert parameter["name"].lower() == "idempotency-key" and parameter["in"] == "header"
    schema = parameter["schema"]
    assert (schema["minLength"], schema["maxLength"]) == (1, MAX_KEY_LENGTH) == (1, 255)


def test_unknown_route_is_404_problem(api):
    status, headers, _ = api("GET", "/v1/nothing")
    assert status == 404 and headers["content-type"] == "application/problem+json"


def test_openapi_document_is_served(api):
    status, _, doc = api("GET", "/openapi.json")
    assert status == 200 and doc["openapi"].startswith("3.1") and "/v1/messages" in doc["paths"]


def test_query_field_errors_name_the_parameter_as_sent(api):
    status, _, problem = api("DELETE", "/v1/admin/suppressions/a%40example.com")
    assert status == 400 and problem["type"].endswith("validation-error")
    assert problem["errors"] == [{"field": "reason", "message": "Field required"}]


@pytest.mark.parametrize("email", ["not-an-address", "a@example.com\r\nBcc: eve@example.com", "jörg@example.com"])
def test_reset_recipient_errors_name_the_email_field(api, email):
    status, _, problem = api("POST", "/v1/password-resets", {"account_id": "acct-1", "email": email})
    assert status == 400 and problem["type"].endswith("invalid-request")
    assert [error["field"] for error in problem["errors"]] == ["email"]


@pytest.mark.parametrize(
    ("method", "query", "body"),
    [("GET", None, None), ("PUT", None, {"reason": "r"}), ("DELETE", {"reason": "r"}, None)],
)
@pytest.mark.parametrize("recipient", ["not-an-address", "%2B1206555", "a%0D%0A%40example.com"])
def test_suppression_recipient_errors_name_the_path_parameter(api, method, query, body, recipient):
    prefix = "/v1/suppressions/" if method == "GET" else "/v1/admin/suppressions/"
    status, _, problem = api(method, prefix + recipient, body, query=query, principal=ADMIN)
    assert status == 400 and problem["type"].endswith("invalid-request")
    assert [error["field"] for error in problem["errors"]] == ["recipient"]


def test_send_recipient_errors_still_name_to(api):
    _, _, problem = post(api, {**VALID, "to": "not-an-address"})
    assert [error["field"] for error in problem["errors"]] == ["to"]


def test_params_encoding_error_does_not_quote_the_input(api):
    status, _, problem = post(api, raw_body=json.dumps({**VALID, "params": {"summary": "x\ud800"}}))
    assert status == 400 and problem["type"].endswith("validation-error")
    assert [error["field"] for error in problem["errors"]] == ["params"]
    assert "\ud800" not in problem["errors"][0]["message"] and "position" not in problem["errors"][0]["message"]


@pytest.mark.parametrize(
    ("fallback", "field"),
    [
        ({"channel": "sms", "to": "bad"}, "escalation.fallback.1.to"),
        ({"channel": "email", "to": "not-an-address"}, "escalation.fallback.1.to"),
    ],
)
def test_unsendable_escalation_fallback_is_refused_at_request_time(api, fallback, field):
    # Given an escalation whose second fallback could never be sent
    escalation = {"deadline_seconds": 60, "fallback": [{"channel": "email", "to": "ops@example.com"}, fallback]}
    # When the app sends, Then the request is refused naming that fallback, and nothing is written
    status, _, problem = post(api, {**VALID, "escalation": escalation})
    assert status == 400 and problem["type"].endswith("invalid-request")
    assert [error["field"] for error in problem["errors"]] == [field]
    assert boto3.client("dynamodb").scan(TableName=TABLE)["Count"] == 0


def test_escalation_fallback_on_a_channel_the_template_lacks_is_refused_at_request_time(api):
    # Given a notice (email only) whose escalation falls back to SMS
    body = {
        **VALID,
        "template": {"id": "notice", "version": "1"},
        "params": {"subject": "s", "body": "b"},
        "escalation": {"deadline_seconds": 60, "fallback": [{"channel": "sms", "to": "+12065550123"}]},
    }
    # When the app sends, Then the request is refused naming the fallback's channel
    status, _, problem = post(api, body)
    assert status == 422 and problem["type"].endswith("/template-channel-unsupported")
    assert [error["field"] for error in problem["errors"]] == ["escalation.fallback.0.channel"]
    assert boto3.client("dynamodb").scan(TableName=TABLE)["Count"] == 0
