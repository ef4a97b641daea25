"""SMS timing by destination country: how often a pull-only provider is asked for an SMS's
status, and the escalation deadline of an SMS whose request gave none.

Carriers' delays differ by region (the alerting design note): a delivery report from a US, UK or
EU carrier usually arrives within seconds, while routes with content scrubbing or long
interconnect chains (India's DLT registry, many West African and South-East Asian routes) take
minutes. One interval for every number either asks the fast routes too slowly or the slow ones
too often; one deadline escalates the slow routes' alerts that were about to arrive. The table
is a deployment setting (SMS_COUNTRY_TIMING, CDK context `sms_country_timing`); its `default` row
covers every country it does not list. docs/sms-guardrails.md gives the figures and why.
"""

from __future__ import annotations

from collections.abc import Mapping

from sendledger.domain.values import value

DEFAULT_ROW = "default"


@value
class CountryTiming:
    status_interval_seconds: int  # a pull-only provider's status ask, after acceptance and again
    escalation_deadline_seconds: int  # an SMS escalation's deadline when the request names none


FAST = CountryTiming(status_interval_seconds=30, escalation_deadline_seconds=300)
SLOW = CountryTiming(status_interval_seconds=120, escalation_deadline_seconds=1_800)
# The shipped table: fast where delivery reports come in seconds, slow where they take minutes,
# the default row (60 s, 15 min: the provider's own interval before this table) for the rest.
SMS_TIMING_DEFAULTS: Mapping[str, CountryTiming] = {
    DEFAULT_ROW: CountryTiming(status_interval_seconds=60, escalation_deadline_seconds=900),
    **dict.fromkeys(("US", "CA", "GB", "IE", "DE", "FR", "NL", "BE", "ES", "IT", "SE", "DK", "NO", "FI"), FAST),
    **dict.fromkeys(("IN", "NG", "GH", "KE", "ID", "PH", "VN", "BD", "PK"), SLOW),
}


def timing_for(table: Mapping[str, CountryTiming], country: str) -> CountryTiming:
    return table.get(country) or table[DEFAULT_ROW]


def slowest(table: Mapping[str, CountryTiming]) -> tuple[str, CountryTiming]:
    """The row with the longest status interval (of equals, the first by name): the SLO
    arithmetic states its lag."""
    return max(sorted(table.items()), key=lambda row: row[1].status_interval_seconds)
