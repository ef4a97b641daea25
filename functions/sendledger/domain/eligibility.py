"""Eligibility: decided only from the local suppression table and the source watermark.

A send is `eligible` when no active suppression exists and the recipient's outcome is knowable;
`eligible_stale` when the recipient's last send is newer than `watermark - grace` (its bounce or
complaint may still be on the way); `suppressed` when the table says so.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum

from sendledger.domain.values import value


class StalePolicy(StrEnum):
    """What a stale-eligible send does (`STALE_ELIGIBILITY_POLICY`, or the per-caller flag)."""

    ALLOW = "allow"  # send now: the recipient's last outcome may still be on the way
    DEFER = "defer"  # answer `pending`; the poller retries once the outcome is knowable


class Eligibility(StrEnum):
    ELIGIBLE = "eligible"
    ELIGIBLE_STALE = "eligible_stale"
    SUPPRESSED = "suppressed"


@value
class SuppressionState:
    suppressed: bool
    version: int
    reason: str | None = None
    since: datetime | None = None


NEVER_SUPPRESSED = SuppressionState(suppressed=False, version=0)


@value
class Decision:
    result: Eligibility
    suppression_version: int
    watermark_age_seconds: float | None
    reason: str | None = None

    def evidence(self) -> dict[str, object]:
        evidence: dict[str, object] = {
            "eligibility": self.result.value,
            "suppression_version": self.suppression_version,
        }
        if self.watermark_age_seconds is not None:
            evidence["watermark_age_seconds"] = round(self.watermark_age_seconds, 3)
        if self.reason:
            evidence["suppression_reason"] = self.reason
        return evidence


def is_stale(last_send_at: datetime | None, watermark: datetime | None, grace: timedelta) -> bool:
    if last_send_at is None:
        return False
    if watermark is None:
        return True
    return last_send_at > watermark - grace


def decide(
    suppression: SuppressionState,
    last_send_at: datetime | None,
    watermark: datetime | None,
    now: datetime,
    grace: timedelta,
) -> Decision:
    age = (now - watermark).total_seconds() if watermark else None
    if suppression.suppressed:
        return Decision(Eligibility.SUPPRESSED, suppression.version, age, suppression.reason)
    if is_stale(last_send_at, watermark, grace):
        return Decision(Eligibility.ELIGIBLE_STALE, suppression.version, age)
    return Decision(Eligibility.ELIGIBLE, suppression.version, age)
