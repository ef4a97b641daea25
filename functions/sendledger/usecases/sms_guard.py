"""The SMS guardrails on the send path: a caller's destination countries and its daily cap.

Countries are decided from the owner's cached settings and the deployment's default alone: no
request beyond the settings read every send already makes. The cap reads the owner's day count
(written by the publisher from the ledger's stream, never by a send) through a one-second
cache, and adds the segments this container admitted since that read; what this container
admitted today bounds it from below too. What the count can miss is the other containers' sends
of the last second and their sends still between commit and the publisher's write (the stream's
lag, about a second): the overshoot a capped caller can get is its segments of about two seconds
on the other containers (docs/sms-guardrails.md; `make bench` measures it).

A refusal writes nothing: it is logged (caller, country, rule) and counted by the caller of
this module (metric SmsRefused by reason).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from aws_lambda_powertools import Logger

from sendledger.domain.callers import CallerId
from sendledger.domain.clock import Clock
from sendledger.domain.sms_guardrails import (
    CapRefusal,
    CountryRefusal,
    CountryRule,
    SmsRefusal,
    cap_refusal,
    country_of,
    country_refusal,
    utc_day,
)
from sendledger.ports.callers import CallerSettingsStore
from sendledger.ports.sms_usage import SmsUsage

logger = Logger(child=True)

USAGE_CACHE = timedelta(seconds=1)  # how stale a container's read of a day's count may be


@dataclass
class DailyCap:
    """A container's view of its callers' day counts. Two lower bounds of the truth, the larger
    one counts: the counter as last read plus what this container admitted since, and everything
    this container admitted today (exact while one container serves the caller, however far the
    stream lags)."""

    usage: SmsUsage
    clock: Clock
    ttl: timedelta = USAGE_CACHE
    _read: dict[CallerId, tuple[datetime, str, int]] = field(default_factory=dict, repr=False)
    _since: dict[CallerId, int] = field(default_factory=dict, repr=False)
    _own: dict[tuple[CallerId, str], int] = field(default_factory=dict, repr=False)

    def counted(self, caller_id: CallerId, now: datetime) -> int:
        day = utc_day(now)
        read = self._read.get(caller_id)
        if read is None or read[1] != day or not timedelta(0) <= now - read[0] < self.ttl:
            read = (now, day, self.usage.segments_on(caller_id, day))
            self._read[caller_id] = read
            self._since[caller_id] = 0
        return max(read[2] + self._since.get(caller_id, 0), self._own.get((caller_id, day), 0))

    def admitted(self, caller_id: CallerId, segments: int) -> None:
        """Segments this container just committed to send (the counter sees them a moment later)."""
        day = utc_day(self.clock.now())
        self._own = {key: got for key, got in self._own.items() if key[1] == day}  # yesterday's go
        self._own[(caller_id, day)] = self._own.get((caller_id, day), 0) + segments
        if caller_id in self._read:
            self._since[caller_id] = self._since.get(caller_id, 0) + segments


def sms_refusal(
    callers: CallerSettingsStore,
    default_countries: CountryRule | None,
    owner: CallerId,
    number: str,
    cap: DailyCap | None,
    now: datetime,
) -> SmsRefusal | None:
    """Why the owner may not text `number` now (None: it may). `cap` None: the countries alone
    (an escalation's fallback and a resend: their parent's send was counted)."""
    settings = callers.get(owner)
    country = country_of(number)
    refused: SmsRefusal | None = country_refusal(settings.sms_countries, default_countries, country)
    if refused is None and cap is not None and settings.sms_daily_segments is not None:
        refused = cap_refusal(settings.sms_daily_segments, cap.counted(owner, now), country, now)
    if refused is not None:
        log_refusal(owner, refused)
    return refused


def log_refusal(owner: CallerId, refused: SmsRefusal) -> None:
    """The refusal's evidence line: who, where to, and the rule that said no (never the number)."""
    extra: dict[str, object] = {"caller_id": owner, "country": refused.country, "reason": refused.reason.value}
    if isinstance(refused, CountryRefusal):
        extra |= {"rule": refused.rule.describe(), "rule_source": refused.source.value}
    elif isinstance(refused, CapRefusal):
        extra |= {"rule": f"sms_daily_segments {refused.cap}", "counted": refused.counted}
    logger.warning("sms refused", extra=extra)
