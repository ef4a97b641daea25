"""Template versions as data: the rules a publish meets, the locale fallback, the canonical hash."""

from __future__ import annotations

import hashlib
import json

import pytest

from sendledger.domain import templates, tokens
from sendledger.domain.recipients import Channel
from sendledger.domain.template_rules import parse_version, unbalanced_html
from sendledger.domain.template_versions import fallback_chain

BODY = {
    "params": ["name"],
    "email": {"subject": "Hi ${name}", "text": "Hello ${name}"},
    "locales": {"pt": {"email": {"subject": "Olá ${name}", "text": "Olá ${name}"}}},
}


def version_of(body=BODY, template_id="welcome"):
    parsed = parse_version(template_id, "1", body)
    assert parsed.version is not None, parsed.problems
    return parsed.version


@pytest.mark.parametrize(
    ("asked", "used"), [("pt-BR", "pt"), ("pt", "pt"), ("PT-br", "pt"), ("fr-CA", None), (None, None)]
)
def test_locale_falls_back_from_region_to_language_to_default(asked, used):
    rendered = templates.render(version_of(), Channel.EMAIL, {"name": "Ana"}, asked)
    assert rendered.locale == used
    assert rendered.subject == ("Olá Ana" if used else "Hi Ana")


def test_fallback_chain_normalises_tags():
    assert fallback_chain("pt-br") == ["pt-BR", "pt"]
    assert fallback_chain("zh-Hant-TW") == ["zh-Hant-TW", "zh-Hant", "zh"]


def test_the_hash_is_over_the_canonical_body_with_defaults_spelled_out():
    version = version_of()
    reordered = json.loads(json.dumps(BODY))
    reordered["email"] = {"text": "Hello ${name}", "subject": "Hi ${name}"}
    assert version_of(reordered).sha256 == version.sha256  # key order is not content
    assert version_of({**BODY, "tracking": True}).sha256 == version.sha256  # the default is the default
    assert version_of({**BODY, "tracking": False}).sha256 != version.sha256
    expected = hashlib.sha256(
        json.dumps(version.body(), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    ).hexdigest()
    assert version.sha256 == expected


@pytest.mark.parametrize(
    ("body", "field", "starts"),
    [
        ({"params": [], "email": {"subject": "a\nb", "text": "t"}}, "email.subject", "must be one line"),
        ({"params": [], "email": {"subject": "s" * 999, "text": "t"}}, "email.subject", "longer than 998"),
        ({"params": [], "email": {"subject": "s", "text": "t", "html": "<div><p>x</div>"}}, "email.html", "unbalanced"),
        ({"params": [], "email": {"subject": "s", "text": "t", "html": "<p>x"}}, "email.html", "unbalanced"),
        ({"params": [], "sms": {"text": "x" * 1601}}, "sms.text", "longer than 1600"),
        ({"params": ["a"], "sms": {"text": "no placeholder"}}, "params", "'a' is declared but used nowhere"),
        ({"params": [], "sms": {"text": "${b}"}}, "sms.text", "${b} is not a declared param"),
        ({"params": [], "sms": {"text": "costs $5"}}, "sms.text", "a $ that starts"),
        ({"params": []}, "email", "a template needs"),
        (
            {"params": [], "sms": {"text": "x"}, "locales": {"fr": {"email": {"subject": "s", "text": "t"}}}},
            "locales.fr.email",
            "the default has no such variant",
        ),
        ({"params": [], "sms": {"text": "x"}, "locales": {"Français": {}}}, "locales.Français", "not a BCP 47"),
        ({"params": [], "sms": {"text": "x"}, "internal": True}, "internal", "unknown field"),
    ],
)
def test_each_rule_names_its_field(body, field, starts):
    problems = parse_version("t", "1", body).problems
    assert any(p.field == field and p.message.startswith(starts) for p in problems), problems


def test_void_elements_need_no_end_tag_and_a_dollar_can_be_escaped():
    assert unbalanced_html('<p>a<br><img src="x">b</p>') is None
    assert parse_version("t", "1", {"params": [], "sms": {"text": "costs $$5"}}).version is not None


def test_ids_and_versions_follow_todays_pattern():
    problems = parse_version("../etc", "1/2", {"params": [], "sms": {"text": "x"}}).problems
    assert {p.field for p in problems} == {"id", "version"}


def test_a_reset_template_must_declare_the_link_and_never_tracks():
    problems = parse_version("password-reset", "1", {"params": [], "email": {"subject": "s", "text": "t"}}).problems
    assert any(p.field == "params" and "reset_link" in p.message for p in problems)
    reset = version_of(
        {"params": ["reset_link"], "email": {"subject": "s", "text": "${reset_link}"}, "tracking": True},
        "password-reset",
    )
    assert reset.internal and reset.tracking is False


@pytest.mark.parametrize(
    ("seconds", "words"),
    [(600, "10 minutes"), (3600, "1 hour"), (90, "90 seconds"), (60, "1 minute"), (172800, "2 days")],
)
def test_the_reset_window_in_words(seconds, words):
    assert tokens.window_words(seconds) == words
