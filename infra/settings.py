"""Deployment settings read from CDK context, validated before any construct exists."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from infra import constants as c

_STAGE_RE = re.compile(r"^[a-z][a-z0-9-]{0,19}$")
_EMAIL_RE = re.compile(r"^[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+$")
_CATEGORIES = ("transactional", "alert", "security")
_POLICIES = ("allow", "defer")


class SettingsError(ValueError):
    """A setting is invalid, or the settings together cannot meet the SLO."""


@dataclass(frozen=True)
class Settings:
    stage: str = c.DEV_STAGE
    poll_interval_seconds: int = 60
    suppression_lag_slo_seconds: int = 300
    ingestion_mode: str = "poll"
    unknown_grace_seconds: int = 900
    unknown_max_age_seconds: int = 86_400
    reset_window_seconds: int = 600
    reset_max_failed_attempts: int = 5
    reset_url_template: str = "https://app.example.com/reset?token={token}"
    stale_eligibility_policy: str = "allow"
    idempotency_retention_days: int = 30
    transient_bounce_limit: int = 3
    transient_bounce_window_days: int = 7
    sender_email: str = "no-reply@example.com"
    alarm_email: str = ""
    api_rate_limit: int = 50
    api_burst_limit: int = 100
    log_retention_days: int = 30
    # Powertools Tracer subsegments; off by default: the X-Ray SDK costs ~110 ms of cold start.
    xray_sdk: bool = False
    # False skips pip (template tests); the asset is then the bare functions/ source.
    bundle: bool = True

    @classmethod
    def from_context(cls, get: Mapping[str, Any] | None = None) -> Settings:
        """Build from a context mapping (values from `-c k=v` arrive as strings)."""
        ctx = get or {}
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = ctx.get(f.name)
            if raw is None:
                continue
            values[f.name] = _coerce(f.name, raw, type(getattr(cls(), f.name)))
        settings = cls(**values)
        settings.validate()
        return settings

    @property
    def is_dev(self) -> bool:
        return self.stage == c.DEV_STAGE

    @property
    def push_mode(self) -> bool:
        return self.ingestion_mode == "push"

    @property
    def worst_case_lag_seconds(self) -> int:
        """Event -> suppression lag bound of the SES path.

        An event published just after a poll drained the queue waits one full interval, plus
        the source's own delivery delay, plus one poll cycle to apply it. The same bound holds
        in push mode: the watermark (and with it unknown resolution) only advances on polls.
        """
        return self.poll_interval_seconds + c.SES_EVENT_DELIVERY_DELAY_SECONDS + c.POLLER_TIMEOUT_SECONDS

    def validate(self) -> None:
        problems = list(self._problems())
        if problems:
            raise SettingsError("invalid sendledger settings:\n  - " + "\n  - ".join(problems))

    def _problems(self) -> list[str]:
        p: list[str] = []
        if not _STAGE_RE.match(self.stage):
            p.append(f"stage {self.stage!r} must match {_STAGE_RE.pattern}")
        if self.ingestion_mode not in ("poll", "push"):
            p.append(f"ingestion_mode must be poll or push, not {self.ingestion_mode!r}")
        if self.poll_interval_seconds < 60 or self.poll_interval_seconds % 60:
            # EventBridge rate schedules have whole-minute granularity.
            p.append(
                f"poll_interval_seconds={self.poll_interval_seconds} must be a positive "
                "multiple of 60 (EventBridge rate schedules are whole minutes)"
            )
        elif self.worst_case_lag_seconds > self.suppression_lag_slo_seconds:
            p.append(
                "SLO cannot be met: poll_interval_seconds "
                f"({self.poll_interval_seconds}) + SES event delivery delay "
                f"({c.SES_EVENT_DELIVERY_DELAY_SECONDS}) + one poll cycle "
                f"({c.POLLER_TIMEOUT_SECONDS}) = {self.worst_case_lag_seconds} s exceeds "
                f"suppression_lag_slo_seconds ({self.suppression_lag_slo_seconds}). Lower "
                "poll_interval_seconds to at most "
                f"{self._max_poll_interval()} or raise the SLO."
            )
        if "{token}" not in self.reset_url_template or not self.reset_url_template.startswith("https://"):
            p.append("reset_url_template must be an https:// URL containing {token}")
        if not _EMAIL_RE.match(self.sender_email):
            p.append(f"sender_email {self.sender_email!r} is not an email address")
        if self.alarm_email and not _EMAIL_RE.match(self.alarm_email):
            p.append(f"alarm_email {self.alarm_email!r} is not an email address")
        if not _valid_stale_policy(self.stale_eligibility_policy):
            p.append(
                "stale_eligibility_policy must be allow, defer or "
                "category=allow|defer,... (categories: " + ", ".join(_CATEGORIES) + ")"
            )
        for name in (
            "suppression_lag_slo_seconds",
            "unknown_grace_seconds",
            "unknown_max_age_seconds",
            "reset_window_seconds",
            "reset_max_failed_attempts",
            "idempotency_retention_days",
            "transient_bounce_limit",
            "transient_bounce_window_days",
            "api_rate_limit",
            "api_burst_limit",
            "log_retention_days",
        ):
            if getattr(self, name) <= 0:
                p.append(f"{name} must be > 0")
        if self.unknown_max_age_seconds < self.unknown_grace_seconds:
            p.append("unknown_max_age_seconds must be >= unknown_grace_seconds")
        return p

    def _max_poll_interval(self) -> int:
        budget = self.suppression_lag_slo_seconds - c.SES_EVENT_DELIVERY_DELAY_SECONDS - c.POLLER_TIMEOUT_SECONDS
        return max(budget // 60 * 60, 0)


def _coerce(name: str, raw: Any, kind: type) -> Any:
    if kind is bool:
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise SettingsError(f"{name} must be true or false, not {raw!r}")
    if kind is int:
        try:
            return int(str(raw).strip())
        except ValueError:
            raise SettingsError(f"{name} must be an integer, not {raw!r}") from None
    return str(raw).strip()


def _valid_stale_policy(raw: str) -> bool:
    if raw in _POLICIES:
        return True
    for part in raw.split(","):
        category, sep, value = part.partition("=")
        if not sep or category.strip() not in _CATEGORIES or value.strip() not in _POLICIES:
            return False
    return True
