"""The send route's hand check (api/send_body.py) and the documented model (SendMessageRequest)
give the same answer to the same body: accepted with the same values, or refused naming the same
fields with the same words."""

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from sendledger.api.models import SendMessageRequest
from sendledger.api.problems import validation_errors
from sendledger.api.send_body import SendRequest, parse_send_body

VALID = {"channel": "email", "to": "a@example.com", "template": {"id": "welcome", "version": "v1"}}


def _documented(body: Any) -> dict[str, Any] | list[dict[str, str]]:
    try:
        request = SendMessageRequest.model_validate(body)
    except ValidationError as exc:
        return validation_errors(exc.errors())
    esc = request.escalation
    return {
        "channel": request.channel,
        "to": request.to,
        "template": (request.template.id, request.template.version, request.template.locale),
        "params": request.params,
        "category": request.category,
        "event_id": request.event_id,
        "escalation": None if esc is None else (esc.deadline_seconds, tuple((f.channel, f.to) for f in esc.fallback)),
        "provider": request.provider,
    }


def _checked(body: Any) -> dict[str, Any] | list[dict[str, str]]:
    found = parse_send_body(body)
    if not isinstance(found, SendRequest):
        return found
    esc = found.escalation
    return {
        "channel": found.channel.value,
        "to": found.to,
        "template": (found.template_id, found.template_version, found.locale),
        "params": found.params,
        "category": found.category,
        "event_id": found.event_id,
        "escalation": None
        if esc is None
        else (esc.deadline_seconds, tuple((f.channel.value, f.to) for f in esc.fallback)),
        "provider": found.provider,
    }


_text = st.one_of(
    st.sampled_from(["", "a", "x" * 64, "x" * 65, "a b", "fr-CA", "e", "ok\n", "über", "a" * 321, "\ud800"]),
    st.text(max_size=8),
)
_scalar = st.one_of(st.none(), st.booleans(), st.integers(-3, 700_000), st.floats(allow_nan=False), _text)


def _maybe(values: st.SearchStrategy[Any], extra: st.SearchStrategy[Any] = _scalar) -> st.SearchStrategy[Any]:
    return st.one_of(values, values, values, extra)


_fallback = _maybe(st.fixed_dictionaries({"channel": _maybe(st.sampled_from(["email", "sms"])), "to": _text}))
_escalation = _maybe(
    st.fixed_dictionaries(
        {"fallback": _maybe(st.lists(_fallback, max_size=7))},
        optional={"deadline_seconds": st.one_of(st.none(), st.integers(-2, 700_000), st.floats(0.5, 10.0))},
    )
)
_template = _maybe(
    st.fixed_dictionaries(
        {"id": _maybe(st.sampled_from(["welcome", "a.b_c-1"]), _text), "version": _text},
        optional={"locale": _maybe(st.sampled_from(["fr", "pt-BR", "en-001"]), _text), "extra": _scalar},
    )
)
_params = _maybe(st.dictionaries(_text, _maybe(_text), max_size=22))
_body = _maybe(
    st.fixed_dictionaries(
        {"channel": _maybe(st.sampled_from(["email", "sms"])), "to": _text, "template": _template},
        optional={
            "params": _params,
            "category": _maybe(st.sampled_from(["transactional", "alert", "security"])),
            "event_id": st.one_of(st.none(), _text),
            "escalation": st.one_of(st.none(), _escalation),
            "provider": st.one_of(st.none(), st.sampled_from(["ses", "mail-gun", "SES"]), _text),
            "unknown": _scalar,
        },
    ),
    st.one_of(_scalar, st.lists(_scalar, max_size=2)),
)


@settings(max_examples=400)
@given(_body)
def test_the_hand_check_answers_as_the_documented_model(body: Any) -> None:
    assert _checked(body) == _documented(body)


@pytest.mark.parametrize(
    ("escalation", "field", "message"),
    [
        ({"deadline_seconds": 0, "fallback": []}, "escalation.deadline_seconds", "greater than or equal to 1"),
        ({"deadline_seconds": 604_801, "fallback": [{"channel": "sms", "to": "+1"}]}, "", "less than or equal"),
        ({"deadline_seconds": 5.5, "fallback": [{"channel": "sms", "to": "+1"}]}, "", "fractional part"),
        ({"fallback": [{"channel": "fax", "to": "x"}]}, "escalation.fallback.0.channel", "'email' or 'sms'"),
        ({"fallback": [{"channel": "sms", "to": "x"}] * 6}, "escalation.fallback", "at most 5 items"),
    ],
)
def test_an_escalations_limits_are_the_documented_ones(escalation: dict[str, Any], field: str, message: str) -> None:
    problems = _checked({**VALID, "escalation": escalation})
    assert problems == _documented({**VALID, "escalation": escalation})
    assert isinstance(problems, list)
    assert any(message in p["message"] and (not field or p["field"] == field) for p in problems), problems


def _params(count: int, wrong: tuple[int, ...] = ()) -> dict[str, Any]:
    return {f"p{i}": (i if i in wrong else "x") for i in range(count)}


@pytest.mark.parametrize(
    ("params", "accepted"),
    [(_params(20), True), (_params(21), False), (_params(21, (3,)), False), (_params(22, (3,)), False)],
)
def test_a_sends_params_limit_is_the_documented_one(params: dict[str, Any], accepted: bool) -> None:
    checked = _checked({**VALID, "params": params})
    assert checked == _documented({**VALID, "params": params})
    assert isinstance(checked, dict) is accepted


@pytest.mark.parametrize("deadline", [True, "60", " 60 "])
def test_a_deadline_must_be_a_json_integer_as_the_schema_says(deadline: Any) -> None:
    # The one narrowing: pydantic's lax mode took these; the documented schema says integer.
    body = {**VALID, "escalation": {"deadline_seconds": deadline, "fallback": [{"channel": "sms", "to": "+1"}]}}
    assert _checked(body) == [{"field": "escalation.deadline_seconds", "message": "Input should be a valid integer"}]
    assert isinstance(_documented(body), dict)


def test_a_whole_number_float_is_an_integer() -> None:
    body = {**VALID, "escalation": {"deadline_seconds": 60.0, "fallback": [{"channel": "sms", "to": "+1"}]}}
    found = parse_send_body(body)
    assert isinstance(found, SendRequest) and found.escalation is not None
    assert found.escalation.deadline_seconds == 60 and isinstance(found.escalation.deadline_seconds, int)
