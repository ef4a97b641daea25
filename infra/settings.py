"""Deployment settings: the shared tunables plus what only CDK needs, from CDK context.

The tunables (type, default, environment variable) are defined once in sendledger.settings; the
context keys are their field names. Everything is validated before any construct exists.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from infra import constants as c
from sendledger.adapters.callback_queue import CALL_SECONDS
from sendledger.domain.provider import Provider
from sendledger.domain.sms_timing import slowest
from sendledger.settings import IngestionMode, SettingsError, Tunables, fragment_of
from sendledger.settings_schema import number, setting

if TYPE_CHECKING:
    import aws_cdk as cdk
    from aws_cdk import aws_logs as logs

__all__ = ["Settings", "SettingsError"]

# CloudWatch Logs' retention periods: days -> the CDK member's name (CDK is loaded only to build).
_RETENTION_NAMES = {
    1: "ONE_DAY", 3: "THREE_DAYS", 5: "FIVE_DAYS", 7: "ONE_WEEK", 14: "TWO_WEEKS", 30: "ONE_MONTH",
    60: "TWO_MONTHS", 90: "THREE_MONTHS", 120: "FOUR_MONTHS", 150: "FIVE_MONTHS", 180: "SIX_MONTHS",
    365: "ONE_YEAR", 400: "THIRTEEN_MONTHS", 545: "EIGHTEEN_MONTHS", 731: "TWO_YEARS",
    1096: "THREE_YEARS", 1827: "FIVE_YEARS", 2192: "SIX_YEARS", 2557: "SEVEN_YEARS",
    2922: "EIGHT_YEARS", 3288: "NINE_YEARS", 3653: "TEN_YEARS",
}  # fmt: skip
_STAGE_RE = re.compile(r"^[a-z][a-z0-9-]{0,19}$")
_EMAIL_RE = re.compile(r"^[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+$")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(Tunables):
    stage: str = c.DEV_STAGE
    # Synth-time only: checked below and used for the alarms; no Lambda reads it.
    suppression_lag_slo_seconds: int = 300
    # The event rate the SES path must absorb; synthesis checks one poll can drain a cycle's worth.
    peak_events_per_second: float = setting(50.0, parse=number, gt=0)
    alarm_email: str = ""
    # SMS refused (country or cap, every caller) in 5 minutes above which SmsRefusedSpike fires: a
    # form being pumped, or a caller's rule set wrong (docs/sms-guardrails.md).
    sms_refused_alarm_threshold: int = setting(50, ge=1)
    api_rate_limit: int = 50
    api_burst_limit: int = 100
    # Provider webhook routes (no IAM: the provider's signature is checked in the Lambda).
    webhook_rate_limit: int = 20
    webhook_burst_limit: int = 40
    # Every log group the stack owns (functions, API access logs, SMS delivery status): one of
    # CloudWatch Logs' retention periods (LOG_RETENTION_DAYS).
    log_retention_days: int = 30
    # Powertools Tracer subsegments; off by default: the X-Ray SDK costs ~110 ms of cold start.
    xray_sdk: bool = False
    # False skips pip (template tests); the asset is then the bare functions/ source.
    bundle: bool = True
    # The deployment's templates, `<id>/<version>.json`, relative to the project or absolute
    # (empty: the shipped functions/sendledger/templates/); checked here, bundled with the code.
    templates_dir: str = ""

    @classmethod
    def context_keys(cls) -> list[str]:
        """Every CDK context key read: the settings' names, and each provider's tunables."""
        keys = [name for name in cls.rules() if name != "providers"]
        for provider in Provider:
            keys += fragment_of(provider.value).context_keys().values()
        return keys

    @classmethod
    def from_context(cls, get: Mapping[str, Any] | None = None) -> Settings:
        """Build from a context mapping (values from `-c k=v` arrive as strings)."""
        ctx = get or {}
        values: dict[str, Any] = {
            name: ctx[name] for name in cls.rules() if name != "providers" and ctx.get(name) is not None
        }
        problems: list[str] = []
        fragments = {}
        for provider in Provider:
            fragment = fragment_of(provider.value)
            if all(ctx.get(key) is None for key in fragment.context_keys().values()):
                continue  # all defaults: `provider()` answers them
            try:
                fragments[provider.value] = fragment.from_context(ctx)
            except SettingsError as exc:
                problems += exc.problems
        try:
            settings = cls.from_values({**values, "providers": fragments})
        except SettingsError as exc:
            problems = exc.problems + problems
        if problems:
            raise SettingsError.listing(problems)
        settings.check_deployable()
        return settings

    @property
    def is_dev(self) -> bool:
        return self.stage == c.DEV_STAGE

    @property
    def removal_policy(self) -> cdk.RemovalPolicy:
        """Dev stacks clean up after themselves; any other stage keeps its data and logs."""
        import aws_cdk as cdk  # here: settings are read without loading CDK (tests, the SLO check)

        return cdk.RemovalPolicy.DESTROY if self.is_dev else cdk.RemovalPolicy.RETAIN

    @property
    def log_retention(self) -> logs.RetentionDays:
        from aws_cdk import aws_logs as logs

        member: logs.RetentionDays = getattr(logs.RetentionDays, _RETENTION_NAMES[self.log_retention_days])
        return member

    @property
    def push_mode(self) -> bool:
        return self.ingestion_mode is IngestionMode.PUSH

    def event_delays(self) -> list[tuple[Provider, str, int]]:
        """Each enabled provider's own delay before a poll can apply its events."""
        delays = []
        for provider in self.enabled_providers:
            fragment = self.provider(fragment_of(provider.value))
            label, seconds = fragment.event_delay()
            delays.append((provider, label, seconds))
            if provider == self.sms_provider and fragment.status_interval() is not None:
                # A pull-only SMS provider asks each number at its country's interval: the slowest
                # country's is the SMS lag this deployment allows.
                country, timing = slowest(self.sms_country_timing)
                label = f"status pull interval of the slowest SMS country, {country} (sms_country_timing)"
                delays.append((provider, label, timing.status_interval_seconds))
        return delays

    def complaint_delays(self) -> list[tuple[Provider, str, int, str]]:
        """Each enabled pull-only provider's wait before a delivered message is read for a complaint."""
        delays = []
        for provider in self.enabled_providers:
            delay = self.provider(fragment_of(provider.value)).complaint_delay()
            if delay is not None:
                delays.append((provider, *delay))
        return delays

    def lag_seconds(self, delay: int) -> int:
        """Event -> suppression lag bound of a provider whose own delay is `delay`.

        An event emitted just after a poll read the source waits one full interval, plus the
        provider's own delay, plus one poll cycle to apply it. The same bound holds in push mode:
        the watermark (and with it unknown resolution) only advances on polls.
        """
        return self.poll_interval_seconds + delay + c.POLLER_TIMEOUT_SECONDS

    @property
    def worst_case_lag_seconds(self) -> int:
        """The bound of the slowest enabled provider."""
        return max(self.lag_seconds(seconds) for _, _, seconds in self.event_delays())

    @property
    def events_per_cycle(self) -> float:
        """Events that arrive at the peak rate between two polls."""
        return self.peak_events_per_second * self.poll_interval_seconds

    @property
    def drain_seconds(self) -> float:
        """Time one poll needs to apply a cycle's events at the configured concurrency."""
        return self.events_per_cycle * c.APPLY_MS_PER_EVENT / 1000 / self.poll_apply_concurrency

    @property
    def callbacks_timeout_seconds(self) -> int:
        """The callbacks function's timeout: a full batch of POSTs that each wait their whole
        CALLBACK_TIMEOUT_SECONDS and then schedule their next attempt, after the start."""
        per_record = self.callback_timeout_seconds + CALL_SECONDS
        return c.CALLBACKS_BATCH_SIZE * per_record + c.CALLBACKS_START_SECONDS

    @property
    def callback_queue_visibility_seconds(self) -> int:
        """How long a received callback stays hidden unless its attempt sets its next delay."""
        return c.CALLBACK_QUEUE_VISIBILITY_FACTOR * self.callbacks_timeout_seconds

    def slo_arithmetic(self) -> list[str]:
        """The SLO budget of each enabled provider and the drain check, as synthesis prints them."""
        slo = self.suppression_lag_slo_seconds
        lines = [self._budget(provider, label, delay) for provider, label, delay in self.event_delays()]
        lines.append(self.drain_arithmetic())
        for provider, _, delay in self.event_delays():
            lag = self.poll_interval_seconds + delay + self.drain_seconds
            lines.append(
                f"lag at peak ({provider.value}): {self.poll_interval_seconds} s + {delay} s + "
                f"{_n(self.drain_seconds)} s = {_n(lag)} s {_cmp(lag, slo)} {slo} s SLO"
            )
        for provider, label, first, later in self.complaint_delays():
            lag = self.poll_interval_seconds + first + self.drain_seconds
            lines.append(
                f"complaint lag ({provider.value}): poll interval {self.poll_interval_seconds} s + {label} {first} s "
                f"+ one poll cycle {c.POLLER_TIMEOUT_SECONDS} s = {self.lag_seconds(first)} s "
                f"{_cmp(self.lag_seconds(first), slo)} {slo} s SLO; {later}"
            )
            lines.append(
                f"complaint lag at peak ({provider.value}): {self.poll_interval_seconds} s + {first} s + "
                f"{_n(self.drain_seconds)} s = {_n(lag)} s {_cmp(lag, slo)} {slo} s SLO"
            )
        return lines

    def drain_arithmetic(self) -> str:
        timeout = c.POLLER_TIMEOUT_SECONDS
        per_poll = self.poll_apply_concurrency * timeout * 1000 / c.APPLY_MS_PER_EVENT
        return (
            f"drain at peak: {_n(self.peak_events_per_second)} events/s x {self.poll_interval_seconds} s poll "
            f"interval = {_n(self.events_per_cycle)} events per cycle; {_n(self.events_per_cycle)} x "
            f"{c.APPLY_MS_PER_EVENT} ms / {self.poll_apply_concurrency} concurrent applies = "
            f"{_n(self.drain_seconds)} s {_cmp(self.drain_seconds, timeout)} {timeout} s poller timeout "
            f"(one poll applies at most {_n(per_poll)} events)"
        )

    def _budget(self, provider: Provider, label: str, delay: int) -> str:
        lag, slo = self.lag_seconds(delay), self.suppression_lag_slo_seconds
        return (
            f"SLO budget ({provider.value}): poll interval {self.poll_interval_seconds} s + {label} {delay} s + "
            f"one poll cycle {c.POLLER_TIMEOUT_SECONDS} s = {lag} s {_cmp(lag, slo)} {slo} s SLO"
        )

    def check_deployable(self) -> None:
        problems = list(self._problems())
        if problems:
            raise SettingsError.listing(problems)

    def _problems(self) -> list[str]:
        p: list[str] = []
        if self.log_retention_days not in _RETENTION_NAMES:
            p.append(
                f"log_retention_days {self.log_retention_days} is not a CloudWatch Logs retention period, one of "
                + ", ".join(str(days) for days in _RETENTION_NAMES)
            )
        if not _STAGE_RE.match(self.stage):
            p.append(f"stage {self.stage!r} must match {_STAGE_RE.pattern}")
        if self.poll_interval_seconds < 60 or self.poll_interval_seconds % 60:
            # EventBridge rate schedules have whole-minute granularity.
            p.append(
                f"poll_interval_seconds={self.poll_interval_seconds} must be a positive "
                "multiple of 60 (EventBridge rate schedules are whole minutes)"
            )
        else:
            for provider, label, delay in self.event_delays():
                if self.lag_seconds(delay) <= self.suppression_lag_slo_seconds:
                    continue
                lower = self._max_poll_interval(delay)
                p.append(
                    f"SLO cannot be met with {provider.value}: poll_interval_seconds "
                    f"({self.poll_interval_seconds}) + {label} ({delay}) + one poll cycle "
                    f"({c.POLLER_TIMEOUT_SECONDS}) = {self.lag_seconds(delay)} s exceeds "
                    f"suppression_lag_slo_seconds ({self.suppression_lag_slo_seconds}). "
                    + (f"Lower poll_interval_seconds to at most {lower}, or r" if lower >= 60 else "R")
                    + f"aise suppression_lag_slo_seconds to at least {self.lag_seconds(delay)}"
                    + (" or lower the provider's delay." if delay > 60 else ".")
                )
        for provider, label, first, _ in self.complaint_delays():
            if self.lag_seconds(first) > self.suppression_lag_slo_seconds:
                p.append(
                    f"SLO cannot be met for a complaint after delivery with {provider.value}: poll_interval_seconds "
                    f"({self.poll_interval_seconds}) + {label} ({first}) + one poll cycle "
                    f"({c.POLLER_TIMEOUT_SECONDS}) = {self.lag_seconds(first)} s exceeds "
                    f"suppression_lag_slo_seconds ({self.suppression_lag_slo_seconds}). Lower "
                    f"{label.rpartition('(')[2].rstrip(')')} to at most "
                    f"{self.suppression_lag_slo_seconds - self.poll_interval_seconds - c.POLLER_TIMEOUT_SECONDS}, "
                    f"or raise suppression_lag_slo_seconds to at least {self.lag_seconds(first)}."
                )
        from infra import templates

        p += templates.problems(self.templates_dir)
        for provider in self.enabled_providers:
            fragment = self.provider(fragment_of(provider.value))
            capacity = fragment.capacity_problem(self.peak_events_per_second, self.poll_interval_seconds)
            if capacity is not None:
                p.append(capacity)
        if self.drain_seconds > c.POLLER_TIMEOUT_SECONDS:
            # A poll that cannot finish its cycle's events leaves a backlog that grows every cycle.
            p.append(
                "peak event rate cannot be drained within the SLO: "
                + self.drain_arithmetic()
                + ", so the backlog would grow every cycle. Raise poll_apply_concurrency to at least "
                f"{self._min_concurrency()} or lower peak_events_per_second to at most {_n(self._max_peak())}."
            )
        if "{token}" not in self.reset_url_template or not self.reset_url_template.startswith("https://"):
            p.append("reset_url_template must be an https:// URL containing {token}")
        if not _EMAIL_RE.match(self.sender_email):
            p.append(f"sender_email {self.sender_email!r} is not an email address")
        if self.alarm_email and not _EMAIL_RE.match(self.alarm_email):
            p.append(f"alarm_email {self.alarm_email!r} is not an email address")
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
            "webhook_rate_limit",
            "webhook_burst_limit",
            "log_retention_days",
        ):
            if getattr(self, name) <= 0:
                p.append(f"{name} must be > 0")
        if self.unknown_max_age_seconds < self.unknown_grace_seconds:
            p.append("unknown_max_age_seconds must be >= unknown_grace_seconds")
        return p

    def _min_concurrency(self) -> int:
        return math.ceil(self.events_per_cycle * c.APPLY_MS_PER_EVENT / 1000 / c.POLLER_TIMEOUT_SECONDS)

    def _max_peak(self) -> float:
        per_poll = self.poll_apply_concurrency * c.POLLER_TIMEOUT_SECONDS * 1000 / c.APPLY_MS_PER_EVENT
        return per_poll / self.poll_interval_seconds

    def _max_poll_interval(self, delay: int) -> int:
        budget = self.suppression_lag_slo_seconds - delay - c.POLLER_TIMEOUT_SECONDS
        return max(budget // 60 * 60, 0)


def _n(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def _cmp(value: float, limit: float) -> str:
    return "<=" if value <= limit else ">"
