"""Eligibility: decided only from the local suppression table and the source watermark.

A send is `eligible` when no active suppression exists and the recipient's outcome is knowable;
`eligible_stale` when the recipient's last send is newer than `watermark - grace` (its bounce or
complaint may still be on the way); `suppressed` when the table says so.

Under `allow` staleness labels a send but never stops it, so the intent does not condition on
the recipient's last send (a condition would cancel and repeat every in-window send's
transaction). The recipient's update records the label's inputs instead, atomically with the
send it replaced (`RecordedSend`), and the publisher, reading that update from the stream,
derives the label and appends it to the message's history: the same answer as deciding at the
intent, exact because both inputs were read in the one write. `defer` keeps its condition: there
staleness changes what the send does.
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


@value
class RecordedSend:
    """What an `allow` send's recipient update recorded: the send it replaced and its cutoff."""

    message_id: str
    sent_at: datetime
    previous_send_at: datetime | None  # None: the recipient's first send
    previous_message_id: str | None
    stale_after: datetime | None  # the intent's watermark minus the grace; None: no watermark read

    def label(self) -> Eligibility:
        stale = sent_after(self.previous_send_at, self.stale_after)
        return Eligibility.ELIGIBLE_STALE if stale else Eligibility.ELIGIBLE

    def evidence(self) -> dict[str, object]:
        """The label and, when there was one, how long before this send the previous one was."""
        evidence: dict[str, object] = {"eligibility": self.label().value}
        if self.previous_send_at is not None:
            evidence["previous_send_age_seconds"] = round((self.sent_at - self.previous_send_at).total_seconds(), 3)
        return evidence


def stale_after(watermark: datetime | None, grace: timedelta) -> datetime | None:
    """A send after this instant may still have its outcome on the way (None: every send may)."""
    return watermark - grace if watermark else None


def sent_after(last_send_at: datetime | None, cutoff: datetime | None) -> bool:
    if last_send_at is None:
        return False
    return cutoff is None or last_send_at > cutoff


def is_stale(last_send_at: datetime | None, watermark: datetime | None, grace: timedelta) -> bool:
    return sent_after(last_send_at, stale_after(watermark, grace))


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
