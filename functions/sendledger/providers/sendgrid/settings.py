"""SendGrid's settings: the API's base URL, whether the account has Email Activity (a paid add-on)
for unknown resolution, how old a signed webhook may be; its secrets and its events queue."""

from __future__ import annotations

import dataclasses

from sendledger.domain.provider import Provider
from sendledger.fragment import Fragment
from sendledger.settings_schema import setting

# The secret variables hold ARNs (names), never the keys.
ENV_API_BASE = "SENDGRID_API_BASE"
ENV_EMAIL_ACTIVITY = "SENDGRID_EMAIL_ACTIVITY"
ENV_WEBHOOK_MAX_AGE_SECONDS = "SENDGRID_WEBHOOK_MAX_AGE_SECONDS"
ENV_API_KEY_SECRET_ARN = "SENDGRID_API_KEY_SECRET_ARN"  # noqa: S105
ENV_WEBHOOK_KEY_SECRET_ARN = "SENDGRID_WEBHOOK_PUBLIC_KEY_SECRET_ARN"  # noqa: S105
ENV_EVENTS_QUEUE_URL = "SENDGRID_EVENTS_QUEUE_URL"


@dataclasses.dataclass(frozen=True, kw_only=True)
class SendGridSettings(Fragment):
    PROVIDER = Provider.SENDGRID
    WIRING = frozenset({"api_key_secret_arn", "webhook_key_secret_arn", "events_queue_url"})

    api_base: str = setting("https://api.sendgrid.com", env=ENV_API_BASE)
    email_activity: bool = setting(False, env=ENV_EMAIL_ACTIVITY)
    webhook_max_age_seconds: int = setting(300, env=ENV_WEBHOOK_MAX_AGE_SECONDS, ge=1)
    api_key_secret_arn: str = setting("", env=ENV_API_KEY_SECRET_ARN)
    webhook_key_secret_arn: str = setting("", env=ENV_WEBHOOK_KEY_SECRET_ARN)
    events_queue_url: str = setting("", env=ENV_EVENTS_QUEUE_URL)

    def event_delay(self) -> tuple[str, int]:
        # SendGrid posts its event batches every 30 s (or at 768 KB); the api queues them at once.
        return "SendGrid webhook batching", 30


SETTINGS = SendGridSettings
