"""Templates each caller owns, through the api handler on moto: publish immutable versions,
preview them, send them in a locale, prove which words went out; another caller sees none."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import boto3
import pytest

from sendledger.adapters.dynamodb.table import Table
from sendledger.adapters.dynamodb.templates import DynamoTemplates
from sendledger.domain.provider import CallResult, ProviderResponse
from sendledger.domain.template_folder import TemplateFolder
from sendledger.domain.template_rules import parse_version
from sendledger.ports.templates import StoredVersion
from sendledger.usecases.template_catalog import TemplateCatalog
from sendledger.usecases.templates import Published, TemplateLibrary
from tests.conftest import TABLE
from tests.support.fakes import CALLER, FakeClock
from tests.support.outbox import sent_emails

OTHER = "arn:aws:iam::123456789012:user/other-app"
PATH = "/v1/templates/welcome/versions/1"
WELCOME: dict[str, Any] = {
    "params": ["name"],
    "email": {"subject": "Welcome, ${name}", "text": "Hello ${name}, welcome aboard.", "html": "<p>Hello ${name}</p>"},
    "sms": {"text": "Hello ${name}"},
    "locales": {
        "fr": {
            "email": {"subject": "Bienvenue, ${name}", "text": "Bonjour ${name}, bienvenue à bord."},
            "sms": {"text": "Bonjour ${name}, à bientôt"},
        }
    },
}


def send(api: Any, key: str, locale: str | None = None, principal: str | None = None, **changes: Any) -> Any:
    template: dict[str, Any] = {"id": "welcome", "version": "1"}
    if locale:
        template["locale"] = locale
    body = {"channel": "email", "to": "ana@example.com", "template": template, "params": {"name": "Ana"}, **changes}
    extra = {"principal": principal} if principal else {}
    return api("POST", "/v1/messages", body, headers={"Idempotency-Key": key}, **extra)


def test_a_version_is_published_once_and_never_changes(api: Any) -> None:
    status, _, created = api("PUT", PATH, WELCOME)
    assert status == 201, created
    assert created["outcome"] == "created" and created["owner"] == "caller"
    assert created["channels"] == ["email", "sms"] and created["locales"] == ["fr"]
    assert created["body"]["tracking"] is True  # the default, spelled out in what the hash covers
    status, _, again = api("PUT", PATH, WELCOME)
    assert status == 200 and again["outcome"] == "unchanged" and again["sha256"] == created["sha256"]
    changed = {**WELCOME, "sms": {"text": "Hi ${name}"}}
    status, headers, refused = api("PUT", PATH, changed)
    assert status == 409 and refused["type"].endswith("/template-version-exists")
    assert headers["content-type"] == "application/problem+json"
    status, _, shown = api("GET", PATH)
    assert status == 200 and shown["sha256"] == created["sha256"] and shown["body"]["sms"] == WELCOME["sms"]


def test_every_problem_of_a_body_is_named_in_one_422(api: Any) -> None:
    broken = {
        "params": ["name", "unused"],
        "email": {"subject": "Hi\r\n${name}", "text": "${nobody} " + "x" * (100 * 1024), "html": "<p><b>${name}</p>"},
        "sms": {"text": "y" * 1601},
        "locales": {"fr": {"email": {"subject": "Salut", "text": "Bonjour"}, "push": {}}},
        "colour": "red",
    }
    status, _, problem = api("PUT", PATH, broken)
    assert status == 422 and problem["type"].endswith("/template-invalid")
    named = {(e["field"], e["message"].split(" ")[0]) for e in problem["errors"]}
    assert ("colour", "unknown") in named
    assert ("email.subject", "must") in named  # not one line
    assert ("email.text", "larger") in named
    assert ("email.html", "unbalanced") in named
    assert ("sms.text", "longer") in named
    assert ("email.text", "${nobody}") in named  # used but not declared
    assert ("params", "'unused'") in named  # declared but unused
    assert ("locales.fr.push", "unknown") in named
    status, _, _ = api("GET", PATH)
    assert status == 404  # nothing was stored


def test_preview_renders_as_a_send_would_with_the_sms_encoding_and_segments(api: Any) -> None:
    api("PUT", PATH, WELCOME)
    status, _, email = api("POST", f"{PATH}/preview", {"params": {"name": "<Ana>"}, "locale": "fr-CA"})
    assert status == 200, email
    assert (email["locale"], email["subject"]) == ("fr", "Bienvenue, <Ana>")
    assert email["html"] is None  # the French variant has no HTML part: none is invented
    status, _, sms = api("POST", f"{PATH}/preview", {"channel": "sms", "params": {"name": "Ana"}, "locale": "fr"})
    assert status == 200 and sms["text"] == "Bonjour Ana, à bientôt"
    assert sms["sms"] == {"encoding": "UCS-2", "units": 22, "segments": 1}  # "ô" is not GSM-7's ("à" is)
    status, _, plain = api("POST", f"{PATH}/preview", {"channel": "sms", "params": {"name": "Ana"}})
    assert plain["locale"] is None and plain["sms"]["encoding"] == "GSM-7"
    status, _, problem = api("POST", f"{PATH}/preview", {"params": {}})
    assert status == 422 and problem["type"].endswith("/template-params-invalid")
    assert sent_emails() == []  # nothing sent


def test_a_send_in_fr_ca_mails_the_french_words_and_records_the_hash(api: Any, healthy_watermarks: None) -> None:
    _, _, published = api("PUT", PATH, WELCOME)
    status, _, view = send(api, "k-fr", locale="fr-CA")
    assert status == 202, view
    assert view["template"] == {"id": "welcome", "version": "1", "locale": "fr", "owner": "caller"}
    (mail,) = sent_emails()
    assert mail.subject == "Bienvenue, Ana" and "Bonjour Ana, bienvenue" in mail.body
    status, _, shown = api("GET", f"/v1/messages/{view['message_id']}")
    first = shown["history"][0]
    assert first["template"] == {
        "id": "welcome",
        "version": "1",
        "locale": "fr",
        "owner": "caller",
        "sha256": published["sha256"],
    }
    assert "Bonjour" not in json.dumps(shown)  # the words are proven by the hash, never stored
    day = view["created_at"][:10]
    status, _, text = api.raw("GET", "/v1/evidence", query={"since": f"{day}T00:00:00Z", "until": f"{day}T23:59:59Z"})
    (line,) = [json.loads(row) for row in text.splitlines()]
    assert line["template"]["locale"] == "fr" and line["history"][0]["template"]["sha256"] == published["sha256"]


def test_a_locale_without_words_falls_back_to_the_default(api: Any, healthy_watermarks: None) -> None:
    api("PUT", PATH, WELCOME)
    status, _, view = send(api, "k-de", locale="de-AT")
    assert status == 202 and "locale" not in view["template"]
    (mail,) = sent_emails()
    assert mail.subject == "Welcome, Ana"


def test_another_caller_never_sees_nor_sends_the_template(api: Any) -> None:
    api("PUT", PATH, WELCOME)
    for method, path, body in (
        ("GET", PATH, None),
        ("GET", "/v1/templates/welcome", None),
        ("POST", f"{PATH}/preview", {"params": {"name": "x"}}),
        ("POST", f"{PATH}/retire", None),
    ):
        status, _, problem = api(method, path, body, principal=OTHER)
        assert status == 404 and problem["type"].endswith("/not-found"), (method, path)
    status, _, listed = api("GET", "/v1/templates", principal=OTHER)
    assert "welcome" not in {t["id"] for t in listed["templates"]}
    assert {"alert", "notice", "password-reset"} <= {t["id"] for t in listed["templates"]}  # the deployment's
    status, _, problem = send(api, "k-other", principal=OTHER)
    assert status == 422 and problem["type"].endswith("/unknown-template")
    # The other caller may publish the same id: its own, with its own words.
    status, _, theirs = api("PUT", PATH, {**WELCOME, "locales": {}}, principal=OTHER)
    assert status == 201 and theirs["locales"] == []
    _, _, mine = api("GET", PATH)
    assert mine["locales"] == ["fr"]


def test_a_retired_version_refuses_new_sends(api: Any, healthy_watermarks: None) -> None:
    api("PUT", PATH, WELCOME)
    assert send(api, "k-before")[0] == 202
    status, _, retired = api("POST", f"{PATH}/retire")
    assert status == 200 and retired["retired_at"] is not None
    status, _, problem = send(api, "k-after")
    assert status == 422 and problem["type"].endswith("/template-retired")
    # A replay of the send before the retirement is its stored answer, as ever.
    status, headers, replay = send(api, "k-before")
    assert status == 202 and headers.get("idempotent-replayed") == "true"
    status, _, listed = api("GET", "/v1/templates/welcome")
    assert listed["templates"][0]["retired_at"] == retired["retired_at"]


def test_concurrent_publishes_of_one_version_write_once(aws: None, clock: FakeClock) -> None:
    store = DynamoTemplates(Table(TABLE, boto3.client("dynamodb")))
    bodies = [{**WELCOME, "sms": {"text": f"Hello ${{name}} #{n}"}} for n in range(8)]
    versions = [parse_version("welcome", "1", body).version for body in bodies]
    start = threading.Barrier(len(versions))

    def publish(version: Any) -> StoredVersion | None:
        start.wait()
        return store.put_new(StoredVersion(CALLER, version, published_at=clock.now() + timedelta(seconds=1)))

    with ThreadPoolExecutor(len(versions)) as pool:
        results = list(pool.map(publish, versions))
    written = [version for version, result in zip(versions, results, strict=True) if result is None]
    assert len(written) == 1
    kept = store.get(CALLER, "welcome", "1")
    assert kept is not None and kept.version.sha256 == written[0].sha256
    assert all(result.version.sha256 == written[0].sha256 for result in results if result is not None)


def test_concurrent_reset_mail_publishes_point_at_the_latest(aws: None, clock: FakeClock) -> None:
    """Six versions of a caller's reset mail published at once, each from its own container: the
    pointer a reset request reads ends at the latest (each rewrite conditional on its revision)."""
    store = DynamoTemplates(Table(TABLE, boto3.client("dynamodb")))
    numbers = [str(n) for n in range(1, 7)]
    start = threading.Barrier(len(numbers))

    def publish(number: str) -> Any:
        catalog = TemplateCatalog(store=store, deployment=TemplateFolder(), clock=clock, cache_seconds=1, cache_size=4)
        library = TemplateLibrary(store=store, deployment=catalog.deployment, catalog=catalog, clock=clock)
        body = {"params": ["reset_link"], "email": {"subject": f"v{number}", "text": "${reset_link}"}}
        start.wait()
        return library.publish(CALLER, "password-reset", number, body)

    with ThreadPoolExecutor(len(numbers)) as pool:
        published = list(pool.map(publish, numbers))
    assert all(isinstance(result, Published) for result in published)
    pointer = store.reset_mail(CALLER)
    assert pointer.stored is not None and pointer.stored.version.version == "6"
    assert pointer.revision >= len(numbers)


RESET_FR: dict[str, Any] = {
    "params": ["reset_link", "reset_window"],
    "email": {"subject": "Reset", "text": "Open ${reset_link} within ${reset_window}."},
    "locales": {"fr": {"email": {"subject": "Mot de passe", "text": "Ouvrez ${reset_link} sous ${reset_window}."}}},
}


@pytest.fixture
def throttled(services: Any, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The next SES calls answer Throttling (the message waits `pending` for the poller's resend)."""
    real, plan = services.email.send_email, []

    def send_email(message_id: str, to: str, content: Any, *, escalates: bool) -> ProviderResponse:
        if plan:
            plan.pop(0)
            return ProviderResponse(CallResult.THROTTLED, error_code="Throttling")
        return real(message_id, to, content, escalates=escalates)

    monkeypatch.setattr(services.email, "send_email", send_email)
    return plan


def test_a_resend_renders_the_retired_version_it_recorded(
    api: Any, ingestion: Any, clock: FakeClock, throttled: list[str], healthy_watermarks: None
) -> None:
    api("PUT", PATH, WELCOME)
    throttled.extend(["throttled"] * 4)
    status, _, first = send(api, "k-pending", locale="fr")
    assert status == 202 and first["state"] == "pending"
    assert api("POST", f"{PATH}/retire")[0] == 200
    clock.advance(61)
    report = ingestion.poll()
    assert report.resolved == {"resent_accepted": 1}
    (mail,) = sent_emails()
    assert mail.subject == "Bienvenue, Ana"  # the words of the first send, retired since


def test_the_reset_mail_is_the_callers_own_with_the_window_in_words(
    api: Any, ingestion: Any, healthy_watermarks: None
) -> None:
    status, _, published = api("PUT", "/v1/templates/password-reset/versions/1", {**RESET_FR, "tracking": True})
    assert status == 201 and published["body"]["tracking"] is False and published["notes"]
    status, _, problem = send(api, "k-reset", template={"id": "password-reset", "version": "1"})
    assert status == 422 and problem["type"].endswith("/template-internal")
    body = {"account_id": "acct-1", "email": "bob@example.com", "locale": "fr-FR"}
    assert api("POST", "/v1/password-resets", body)[0] == 202
    ingestion.poll()
    (mail,) = sent_emails()
    assert mail.subject == "Mot de passe" and "sous 10 minutes." in mail.body  # RESET_WINDOW_SECONDS=600
    # Another caller's reset mail is still the deployment's.
    assert api("POST", "/v1/password-resets", body, principal=OTHER)[0] == 202
    ingestion.poll()
    theirs = sent_emails()[-1]
    assert theirs.subject == "Reset your password" and "valid for 10 minutes" in theirs.body


def test_an_sms_in_a_locale_bills_the_segments_of_that_locales_words(api: Any, healthy_watermarks: None) -> None:
    """The segments a send records (and the daily cap counts) are those of the words it sends."""
    _, _, published = api("PUT", PATH, WELCOME)
    status, _, french = send(api, "k-sms-fr", locale="fr", channel="sms", to="+447400123456")
    assert status == 202, french
    assert french["sms"] == {"encoding": "UCS-2", "segments": 1}  # "ô", as the preview says
    status, _, shown = api("GET", f"/v1/messages/{french['message_id']}")
    first = shown["history"][0]
    assert (first["sms_encoding"], first["sms_segments"]) == ("UCS-2", 1)
    assert first["template"]["locale"] == "fr" and first["template"]["sha256"] == published["sha256"]
    status, _, plain = send(api, "k-sms-en", channel="sms", to="+447400123456")
    assert status == 202 and plain["sms"]["encoding"] == "GSM-7"
