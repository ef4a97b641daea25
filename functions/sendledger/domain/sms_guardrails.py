"""SMS guardrails per caller: which destination countries a caller may text, and how many billed
segments a UTC day. Decided before any write, from the caller's cached settings, the deployment's
default rule and (for the cap) the day's counted segments: a refused SMS writes nothing.

The country is the region `phonenumbers` gives the number (ISO 3166 alpha-2); a number that belongs
to no single region (a non-geographic +800/+882 range) is "001", refused by every allow rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from sendledger.domain.values import value

COUNTRY_CODE = re.compile(r"[A-Z]{2}")
NON_GEOGRAPHIC = "001"  # phonenumbers' region of a number that belongs to no country
MAX_RULE_COUNTRIES = 250  # more than ISO 3166 lists: a rule naming more is a mistake
MAX_DAILY_SEGMENTS = 10_000_000


class RuleMode(StrEnum):
    ALLOW = "allow"  # only the countries listed
    BLOCK = "block"  # every country but those listed


class SmsRefusalReason(StrEnum):
    """Why an SMS was not sent (the metric's `reason` dimension, the log line's, the evidence's)."""

    COUNTRY_NOT_ALLOWED = "country-not-allowed"
    CAP_REACHED = "cap-reached"


class RuleSource(StrEnum):
    CALLER = "caller"  # the caller's own `sms_countries`
    DEPLOYMENT = "deployment"  # SMS_ALLOWED_COUNTRIES, for callers without a rule of their own


@value
class CountryRule:
    mode: RuleMode
    countries: frozenset[str]

    def allows(self, country: str) -> bool:
        listed = country in self.countries
        return listed if self.mode is RuleMode.ALLOW else not listed

    def as_json(self) -> dict[str, list[str]]:
        return {self.mode.value: sorted(self.countries)}

    def describe(self) -> str:
        """For a log line and a problem's detail: `allow GB,IE`."""
        return f"{self.mode.value} {','.join(sorted(self.countries)) or '(none)'}"


def country_rule(raw: object) -> CountryRule | list[str]:
    """`{"allow": [...]}` or `{"block": [...]}` as a rule, or what is wrong with it."""
    if not isinstance(raw, dict) or len(raw) != 1:
        return ['one of {"allow": [...]} or {"block": [...]}']
    ((mode, listed),) = raw.items()
    if mode not in RuleMode.__members__.values():
        return [f"{str(mode)[:20]!r} is neither allow nor block"]
    if not isinstance(listed, list | tuple) or not all(isinstance(code, str) for code in listed):
        return [f"{mode}: a list of ISO 3166 alpha-2 codes"]
    problems = country_problems(listed)
    return problems or CountryRule(RuleMode(mode), frozenset(code.upper() for code in listed))


def country_problems(codes: Iterable[str]) -> list[str]:
    listed = list(codes)
    problems = [
        f"{code[:8]!r} is not an ISO 3166 alpha-2 code" for code in listed if not COUNTRY_CODE.fullmatch(code.upper())
    ]
    if len(listed) > MAX_RULE_COUNTRIES:
        problems.append(f"at most {MAX_RULE_COUNTRIES} countries")
    return problems


def country_of(e164: str) -> str:
    """The region of a number (parsed as valid E.164 by domain/recipients.py before it is sent);
    text that is no number at all: NON_GEOGRAPHIC."""
    import phonenumbers  # loaded with the first SMS, as recipients.py loads it

    try:
        number = phonenumbers.parse(e164, None)
    except phonenumbers.NumberParseException:
        return NON_GEOGRAPHIC
    return phonenumbers.region_code_for_number(number) or NON_GEOGRAPHIC


@value
class CountryRefusal:
    country: str
    rule: CountryRule
    source: RuleSource
    reason: SmsRefusalReason = SmsRefusalReason.COUNTRY_NOT_ALLOWED


@value
class CapRefusal:
    cap: int  # segments a UTC day
    counted: int  # segments counted today when refused
    retry_after_seconds: int  # until the next UTC day
    country: str
    reason: SmsRefusalReason = SmsRefusalReason.CAP_REACHED


SmsRefusal = CountryRefusal | CapRefusal


def country_refusal(
    caller_rule: CountryRule | None, default: CountryRule | None, country: str
) -> CountryRefusal | None:
    """The caller's own rule replaces the deployment's default (it does not narrow it)."""
    rule, source = (caller_rule, RuleSource.CALLER) if caller_rule is not None else (default, RuleSource.DEPLOYMENT)
    if rule is None or rule.allows(country):
        return None
    return CountryRefusal(country, rule, source)


def cap_refusal(cap: int | None, counted: int, country: str, now: datetime) -> CapRefusal | None:
    """Refused once the day's counted segments reached the cap (the send that would cross it
    goes: a cap is checked before the segments of the message are known to the counter)."""
    if cap is None or counted < cap:
        return None
    return CapRefusal(cap, counted, seconds_to_next_day(now), country)


def utc_day(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%d")


def seconds_to_next_day(now: datetime) -> int:
    today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    left = (today + timedelta(days=1) - now).total_seconds()
    return max(1, int(left + 0.999))


def refusal_evidence(refused: SmsRefusal) -> dict[str, object]:
    """A refusal as a history entry records it (an escalation's refused fallback, a resend)."""
    evidence: dict[str, object] = {"reason": refused.reason.value, "country": refused.country}
    if isinstance(refused, CountryRefusal):
        evidence |= {"rule": refused.rule.as_json(), "rule_source": refused.source.value}
    else:
        evidence |= {"cap": refused.cap, "counted": refused.counted}
    return evidence
