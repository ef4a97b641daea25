"""A send's body, checked without pydantic: the send route's cold start and every send skip the
model machinery (benchmarks/README.md, "cold start").

The rules are the documented schema's (`models.SendMessageRequest`, built from the limits below):
a test feeds both the same bodies and compares their answers. Each problem names its field as
the caller sent it, in pydantic's words. One narrowing: `deadline_seconds` must be a JSON number
with no fraction, as the schema's `integer` says (pydantic's lax mode also took `true` and "60").
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from sendledger.domain import escalation
from sendledger.domain.messages import CATEGORIES, DEFAULT_CATEGORY
from sendledger.domain.recipients import Channel
from sendledger.domain.values import value

# --- the limits, for the hand check below and the documented models alike ------------------
CHANNELS = tuple(channel.value for channel in Channel)
MAX_ADDRESS = 320
ID_PATTERN = r"^[A-Za-z0-9_.-]+$"
MAX_ID = 64
LOCALE_PATTERN = r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$"
LOCALE_LENGTH = (2, 35)
MAX_PARAMS = 20
MAX_EVENT_ID = 255
PROVIDER_PATTERN = r"^[a-z0-9-]+$"
MAX_PROVIDER = 32
DEADLINE_SECONDS = (1, 7 * 86_400)
FALLBACKS = (1, 5)

FieldErrors = list[dict[str, str]]
NOT_UNICODE = "Input should be a valid string, unable to parse raw data as a unicode string"
NO_BODY: FieldErrors = [{"field": "body", "message": "Field required"}]  # no body, or JSON null


@value
class EscalationRequest:
    deadline_seconds: int | None  # None: an SMS's country's (an email must name one: the route checks)
    fallback: tuple[escalation.Fallback, ...]

    def to_domain(self, default_deadline: int) -> escalation.Escalation:
        return escalation.Escalation(self.deadline_seconds or default_deadline, self.fallback)


@value
class SendRequest:
    channel: Channel
    to: str
    template_id: str
    template_version: str
    locale: str | None
    params: dict[str, str]
    category: str
    event_id: str | None
    escalation: EscalationRequest | None
    provider: str | None


def parse_send_body(body: Any) -> SendRequest | FieldErrors:
    """The request a parsed JSON body asks for, or every problem with it."""
    check = _Check()
    fields = check.model(body, (), "SendMessageRequest", _SEND_FIELDS)
    if check.problems:
        return check.problems
    template, esc = fields["template"], fields["escalation"]
    return SendRequest(
        channel=Channel(fields["channel"]),
        to=fields["to"],
        template_id=template["id"],
        template_version=template["version"],
        locale=template["locale"],
        params=fields["params"],
        category=fields["category"],
        event_id=fields["event_id"],
        escalation=None if esc is None else EscalationRequest(esc["deadline_seconds"], esc["fallback"]),
        provider=fields["provider"],
    )


_MISSING = object()
Rule = Callable[["_Check", Any, tuple[str, ...]], Any]
Fields = tuple[tuple[str, Rule, Any], ...]  # (name, rule, default: _MISSING when required)


class _Check:
    def __init__(self) -> None:
        self.problems: FieldErrors = []

    def fail(self, where: tuple[str, ...], message: str) -> None:
        field = ".".join(where).encode("utf-8", "surrogatepass").decode("utf-8", "replace")  # as pydantic names it
        self.problems.append({"field": field or "body", "message": message})

    def model(self, data: Any, where: tuple[str, ...], name: str, fields: Fields) -> dict[str, Any]:
        if not isinstance(data, Mapping):
            self.fail(where, f"Input should be a valid dictionary or instance of {name}")
            return {}
        found: dict[str, Any] = {}
        for field, rule, default in fields:
            if field in data:
                found[field] = rule(self, data[field], (*where, field))
            elif default is _MISSING:
                self.fail((*where, field), "Field required")
            else:
                found[field] = default() if callable(default) else default
        known = {field for field, _, _ in fields}
        for extra in data:
            if extra not in known:
                self.fail((*where, str(extra)), "Extra inputs are not permitted")
        return found


def _text(low: int, high: int, pattern: str | None = None, optional: bool = False) -> Rule:
    matches = re.compile(pattern.removeprefix("^").removesuffix("$")).fullmatch if pattern else None

    def rule(check: _Check, data: Any, where: tuple[str, ...]) -> Any:
        if data is None and optional:
            return None
        if not isinstance(data, str):
            check.fail(where, "Input should be a valid string")
        elif not _encodable(data):
            check.fail(where, NOT_UNICODE)
        elif len(data) < low:
            check.fail(where, f"String should have at least {low} character{'s' * (low != 1)}")
        elif len(data) > high:
            check.fail(where, f"String should have at most {high} character{'s' * (high != 1)}")
        elif matches is not None and matches(data) is None:
            check.fail(where, f"String should match pattern '{pattern}'")
        return data

    return rule


def _one_of(choices: tuple[str, ...]) -> Rule:
    quoted = [f"'{choice}'" for choice in choices]
    message = f"Input should be {', '.join(quoted[:-1])} or {quoted[-1]}"

    def rule(check: _Check, data: Any, where: tuple[str, ...]) -> Any:
        if isinstance(data, str) and not _encodable(data):
            check.fail(where, NOT_UNICODE)
        elif not (isinstance(data, str) and data in choices):
            check.fail(where, message)
        return data

    return rule


def _params(check: _Check, data: Any, where: tuple[str, ...]) -> Any:
    if not isinstance(data, Mapping):
        check.fail(where, "Input should be a valid dictionary")
        return data
    # As pydantic counts: past the limit of valid items, that is the one problem named.
    valid, wrong = 0, []
    for key, item in data.items():
        if not isinstance(item, str):
            wrong.append(str(key))
            continue
        valid += 1
        if valid > MAX_PARAMS:
            check.fail(where, f"Dictionary should have at most {MAX_PARAMS} items after validation, not more")
            return data
    for key in wrong:
        check.fail((*where, key), "Input should be a valid string")
    if not wrong and not all(_encodable(key + item) for key, item in data.items()):
        check.fail(where, "Value error, keys and values must be valid UTF-8 (no lone surrogates)")
    return dict(data)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_FRACTION = "valid integer, got a number with a fractional part"


def _deadline(check: _Check, data: Any, where: tuple[str, ...]) -> Any:
    low, high = DEADLINE_SECONDS
    if data is None:
        return None
    if isinstance(data, float) and data.is_integer():
        data = int(data)
    if isinstance(data, float):
        finite = math.isfinite(data)
        check.fail(where, f"Input should be a {_FRACTION if finite else 'finite number'}")
    elif not isinstance(data, int) or isinstance(data, bool):
        check.fail(where, "Input should be a valid integer")
    elif data < low:
        check.fail(where, f"Input should be greater than or equal to {low}")
    elif data > high:
        check.fail(where, f"Input should be less than or equal to {high}")
    return data


def _fallbacks(check: _Check, data: Any, where: tuple[str, ...]) -> Any:
    low, high = FALLBACKS
    if not isinstance(data, list):
        check.fail(where, "Input should be a valid list")
        return ()
    if len(data) > high:  # its items are not looked at, as pydantic does not
        check.fail(where, f"List should have at most {high} items after validation, not {len(data)}")
        return ()
    if len(data) < low:
        check.fail(where, f"List should have at least {low} item after validation, not {len(data)}")
    found = []
    for index, item in enumerate(data):
        shape = check.model(item, (*where, str(index)), "Fallback", _FALLBACK_FIELDS)
        if shape.keys() == {"channel", "to"} and shape["channel"] in CHANNELS:
            found.append(escalation.Fallback(Channel(shape["channel"]), shape["to"]))
    return tuple(found)


def _nested(name: str, fields: Fields, optional: bool = False) -> Rule:
    def rule(check: _Check, data: Any, where: tuple[str, ...]) -> Any:
        if data is None and optional:
            return None
        return check.model(data, where, name, fields)

    return rule


_FALLBACK_FIELDS: Fields = (
    ("channel", _one_of(CHANNELS), _MISSING),
    ("to", _text(1, MAX_ADDRESS), _MISSING),
)
_TEMPLATE_FIELDS: Fields = (
    ("id", _text(1, MAX_ID, ID_PATTERN), _MISSING),
    ("version", _text(1, MAX_ID, ID_PATTERN), _MISSING),
    ("locale", _text(*LOCALE_LENGTH, LOCALE_PATTERN, optional=True), None),
)
_ESCALATION_FIELDS: Fields = (
    ("deadline_seconds", _deadline, None),
    ("fallback", _fallbacks, _MISSING),
)
_SEND_FIELDS: Fields = (
    ("channel", _one_of(CHANNELS), _MISSING),
    ("to", _text(1, MAX_ADDRESS), _MISSING),
    ("template", _nested("TemplateRef", _TEMPLATE_FIELDS), _MISSING),
    ("params", _params, dict),
    ("category", _one_of(CATEGORIES), DEFAULT_CATEGORY),
    ("event_id", _text(1, MAX_EVENT_ID, optional=True), None),
    ("escalation", _nested("Escalation", _ESCALATION_FIELDS, optional=True), None),
    ("provider", _text(1, MAX_PROVIDER, PROVIDER_PATTERN, optional=True), None),
)
