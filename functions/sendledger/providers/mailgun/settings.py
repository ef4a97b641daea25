"""Mailgun's settings: the sending domain, the API's base URL (US; EU is https://api.eu.mailgun.net),
how old Events API results must be to be final, the webhook timestamps accepted; its secrets."""

from __future__ import annotations

import dataclasses

from sendledger.domain.provider import Provider
from sendledger.fragment import Fragment
from sendledger.settings_schema import setting

# The secret variables hold ARNs (names), never the keys.
ENV_DOMAIN = "MAILGUN_DOMAIN"
ENV_API_BASE = "MAILGUN_API_BASE"
ENV_EVENTS_FINAL_AFTER_SECONDS = "MAILGUN_EVENTS_FINAL_AFTER_SECONDS"
ENV_WEBHOOK_MAX_AGE_SECONDS = "MAILGUN_WEBHOOK_MAX_AGE_SECONDS"
ENV_API_KEY_SECRET_ARN = "MAILGUN_API_KEY_SECRET_ARN"  # noqa: S105
ENV_SIGNING_KEY_SECRET_ARN = "MAILGUN_WEBHOOK_SIGNING_KEY_SECRET_ARN"  # noqa: S105
ENV_EVENTS_QUEUE_URL = "MAILGUN_EVENTS_QUEUE_URL"


@dataclasses.dataclass(frozen=True, kw_only=True)
class MailgunSettings(Fragment):
    PROVIDER = Provider.MAILGUN
    WIRING = frozenset({"api_key_secret_arn", "signing_key_secret_arn", "events_queue_url"})

    domain: str = setting("", env=ENV_DOMAIN)
    api_base: str = setting("https://api.mailgun.net", env=ENV_API_BASE)
    events_final_after_seconds: int = setting(1800, env=ENV_EVENTS_FINAL_AFTER_SECONDS, ge=0)
    webhook_max_age_seconds: int = setting(300, env=ENV_WEBHOOK_MAX_AGE_SECONDS, ge=1)
    api_key_secret_arn: str = setting("", env=ENV_API_KEY_SECRET_ARN)
    # No signing key: no webhooks.
    signing_key_secret_arn: str = setting("", env=ENV_SIGNING_KEY_SECRET_ARN)
    # Where verified webhook events wait for the poller.
    events_queue_url: str = setting("", env=ENV_EVENTS_QUEUE_URL)

    def event_delay(self) -> tuple[str, int]:
        # Only Events API results older than this are final: an event visible late is applied by
        # the finality pass (webhooks are faster, but Mailgun never retries a missed `delivered`).
        return "Mailgun Events API finality (mailgun_events_final_after_seconds)", self.events_final_after_seconds


SETTINGS = MailgunSettings
