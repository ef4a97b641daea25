"""The text forms of the settings that hold more than one value, for settings.py to declare.

settings_schema.py reads a single value by its default's type; a list, a map or a table is
written here: its parser (the environment's text, or CDK context's and a test's values as they
are: each parser also takes its own result) and its writer (`show_*`, what `environment()`
writes for it, which its parser reads back).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from sendledger.domain.callers import TENANT_ID, configured_principal
from sendledger.domain.eligibility import StalePolicy
from sendledger.domain.messages import CATEGORIES
from sendledger.domain.provider import Provider, carriers, channels_of
from sendledger.domain.recipients import Channel
from sendledger.domain.sms_guardrails import country_problems
from sendledger.domain.sms_timing import DEFAULT_ROW, SMS_TIMING_DEFAULTS, CountryTiming
from sendledger.fragment import Fragment
from sendledger.settings_schema import member_of

_CHOICES = tuple(choice.value for choice in StalePolicy)


def admins(raw: Any) -> tuple[str, ...]:
    listed = _json_or(raw, str.split)
    if not isinstance(listed, list | tuple):
        raise ValueError("must be ARNs separated by spaces, or a JSON list of them")
    return tuple(dict.fromkeys(configured_principal(str(arn)) for arn in listed))


def tenants(raw: Any) -> dict[str, str]:
    pairs = _json_or(raw, _tenant_pairs)
    if not isinstance(pairs, Mapping):
        raise ValueError("must be <principal ARN>=<tenant id> pairs separated by spaces, or a JSON object")
    found = {}
    for arn, tenant in pairs.items():
        if not (isinstance(tenant, str) and TENANT_ID.fullmatch(tenant)):
            raise ValueError(f"tenant of {arn!r} must match {TENANT_ID.pattern}, not {tenant!r}")
        # A federated user's ARN here is the deployer's opt-in (docs/api.md#callers)
        found[configured_principal(str(arn), federated_allowed=True)] = tenant
    return found


def carrier_of(channel: Channel) -> Callable[[Any], Provider]:
    provider_named = member_of(Provider)
    return lambda raw: _carrier(provider_named(raw), channel)


def _listed(raw: Any) -> list[Any]:
    if isinstance(raw, str):
        return [part.strip() for part in raw.split(",") if part.strip()]
    if isinstance(raw, Iterable):
        return list(raw)
    raise ValueError("must be names separated by commas")


def email_providers(raw: Any) -> frozenset[Provider]:
    return frozenset(carrier_of(Channel.EMAIL)(part) for part in _listed(raw))


def countries(raw: Any) -> frozenset[str]:
    codes = [str(code).upper() for code in _listed(raw)]
    problems = country_problems(codes)
    if problems:
        raise ValueError("; ".join(problems))
    return frozenset(codes)


def country_timing(raw: Any) -> dict[str, CountryTiming]:
    rows = _json_or(raw, json.loads)
    if not isinstance(rows, Mapping):
        raise ValueError("must be a JSON object of countries")
    for country in rows:
        if (country != DEFAULT_ROW and country_problems([country])) or country != country.strip():
            raise ValueError(f"{country!r} is neither an ISO 3166 alpha-2 code nor {DEFAULT_ROW!r}")
    merged: dict[str, Any] = {name: vars(row) for name, row in SMS_TIMING_DEFAULTS.items()}
    for country, row in rows.items():
        given = row if isinstance(row, Mapping) else vars(row)
        for name, seconds in given.items():
            if name not in CountryTiming.__dataclass_fields__ or not isinstance(seconds, int) or seconds < 1:
                raise ValueError(f"{country}.{name}: a whole number of seconds, at least 1, of a CountryTiming")
        key = country if country == DEFAULT_ROW else country.upper()
        merged[key] = {**merged.get(key, merged[DEFAULT_ROW]), **given}
    return {country: CountryTiming(**row) for country, row in merged.items()}


def stale_policy(raw: Any) -> dict[str, StalePolicy]:
    if isinstance(raw, str):
        raw = parse_stale_policy(raw)
    if not isinstance(raw, Mapping):
        raise ValueError("must be allow, defer, or <category>=<allow|defer> pairs separated by commas")
    unknown = set(raw) - set(CATEGORIES)
    if unknown:
        raise ValueError(f"unknown categories {sorted(unknown)} (categories: {', '.join(CATEGORIES)})")
    return {category: StalePolicy(_check_choice(str(raw.get(category, StalePolicy.ALLOW)))) for category in CATEGORIES}


def parse_stale_policy(raw: str) -> dict[str, str]:
    """`allow`, `defer`, or per category: `transactional=allow,security=defer`."""
    policy = dict.fromkeys(CATEGORIES, "allow")
    raw = raw.strip()
    if not raw:
        return policy
    if "=" not in raw:
        return dict.fromkeys(CATEGORIES, _check_choice(raw))
    for part in raw.split(","):
        category, _, value = part.partition("=")
        if category.strip() not in CATEGORIES:
            raise ValueError(f"unknown category {category.strip()!r} (categories: {', '.join(CATEGORIES)})")
        policy[category.strip()] = _check_choice(value.strip())
    return policy


def format_stale_policy(policy: Mapping[str, str]) -> str:
    """The inverse of parse_stale_policy, in its shortest form."""
    choices = {policy.get(category, "allow") for category in CATEGORIES}
    if len(choices) == 1:
        return choices.pop()
    return ",".join(f"{category}={policy.get(category, 'allow')}" for category in CATEGORIES)


def fragments(raw: Any) -> dict[str, Fragment]:
    if not (isinstance(raw, Mapping) and all(isinstance(fragment, Fragment) for fragment in raw.values())):
        raise ValueError("must map provider names to their settings fragments")
    return dict(raw)


def show_providers(providers: frozenset[Provider]) -> str:
    return ",".join(provider.value for provider in Provider if provider in providers)


def show_countries(codes: frozenset[str]) -> str:
    return ",".join(sorted(codes))


def show_timing(rows: Mapping[str, CountryTiming]) -> str:
    return json.dumps({country: vars(row) for country, row in sorted(rows.items())}, separators=(",", ":"))


def show_tenants(tenants: Mapping[str, str]) -> str:
    return " ".join(f"{arn}={tenant}" for arn, tenant in tenants.items())


def _carrier(provider: Provider, channel: Channel) -> Provider:
    if channel not in channels_of(provider.value):
        others = ", ".join(p.value for p in carriers(channel))
        raise ValueError(f"{provider.value} does not carry {channel.value} (providers that do: {others})")
    return provider


def _check_choice(value: str) -> str:
    if value not in _CHOICES:
        raise ValueError(f"values are allow|defer, not {value!r}")
    return value


def _tenant_pairs(text: str) -> dict[str, str]:
    pairs = {}
    for entry in text.split():
        arn, equals, tenant = entry.rpartition("=")  # a role name may contain "=", a tenant id not
        if not (arn and equals):
            raise ValueError(f"{entry[:200]!r} is not <principal ARN>=<tenant id>")
        pairs[arn] = tenant
    return pairs


def _json_or(raw: Any, parse_text: Callable[[str], Any]) -> Any:
    """A JSON list or object as given (CDK context, or a variable starting with [ or {), else
    `parse_text` of the plain form. IAM names may contain `,` and `=`, never a space."""
    if not isinstance(raw, str):
        return raw
    text = raw.strip()
    if text.startswith(("[", "{")):
        try:
            return json.loads(text)
        except ValueError:
            raise ValueError("not valid JSON") from None
    return parse_text(text)
