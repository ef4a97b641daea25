"""Bodies of the admin routes for caller settings (`/v1/admin/callers/...`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictBool, StrictInt

from sendledger.api.models import Model, Strict
from sendledger.domain.caller_settings import MAX_FLAG_CONTEXT_ENTRIES, MAX_FLAG_CONTEXT_VALUE, MAX_URL_LENGTH
from sendledger.domain.sms_guardrails import MAX_DAILY_SEGMENTS, MAX_RULE_COUNTRIES

MAX_REASON = 500
COUNTRY = Annotated[str, Field(min_length=2, max_length=2, pattern="^[A-Za-z]{2}$")]

CALLER_ID_PATTERN = r"^[0-9a-f]{24}$"


class CallerSettingsRequest(Strict):
    """The settings to change; a field left out keeps its value."""

    callback_url: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_URL_LENGTH,
        description="https URL whose host resolves to public addresses only; null: no callbacks. "
        "Setting the first one creates the caller's callback secret (shown once, as new_secret)",
    )
    test_mode: StrictBool | None = Field(default=None, description="simulated outcomes for this caller's sends")
    flag_context: dict[str, Annotated[str, Field(max_length=MAX_FLAG_CONTEXT_VALUE)]] | None = Field(
        default=None,
        max_length=MAX_FLAG_CONTEXT_ENTRIES,
        description="attributes feature flag rules may name (keys [a-z][a-z0-9_]*, not caller nor "
        "caller_bucket); null: none",
    )
    sms_countries: dict[str, Annotated[list[COUNTRY], Field(max_length=MAX_RULE_COUNTRIES)]] | None = Field(
        default=None,
        min_length=1,
        max_length=1,
        description='the countries this caller may text: {"allow": ["GB", ...]} or {"block": [...]} (ISO 3166 '
        "alpha-2, the region of the number); null: the deployment's default (SMS_ALLOWED_COUNTRIES)",
    )
    sms_daily_segments: StrictInt | None = Field(
        default=None,
        ge=1,
        le=MAX_DAILY_SEGMENTS,
        description="billed SMS segments per UTC day; once reached, SMS are refused (429) until the next UTC "
        "day; null: no cap",
    )
    reason: str | None = Field(
        default=None, min_length=1, max_length=MAX_REASON, description="why: recorded in the settings' history"
    )


class SettingsChangeView(Model):
    at: str
    actor: str = Field(description="the admin principal that made the change")
    reason: str | None
    changed: dict[str, object] = Field(description="the fields the change set, with their new values")


class CallbackSecretView(Model):
    configured: bool = Field(description="the caller has a callback secret")
    rotating: bool = Field(description="a previous secret is still valid: callbacks carry two v1 signatures")
    rotated_at: str | None = Field(description="when the current secret replaced the previous one")


class CallerView(Model):
    """A caller's settings. Never a secret, but `new_secret` in the one answer that made it."""

    caller_id: str
    principal: str | None = Field(default=None, description="the principal asked about (?principal=)")
    callback_url: str | None
    test_mode: bool
    flag_context: dict[str, str]
    sms_countries: dict[str, list[str]] | None = Field(description="the caller's own rule; null: the deployment's")
    sms_default_countries: dict[str, list[str]] | None = Field(
        description="the deployment's rule (SMS_ALLOWED_COUNTRIES), for callers without one; null: every country"
    )
    sms_daily_segments: int | None = Field(description="billed segments per UTC day; null: no cap")
    sms_segments_today: int = Field(
        description="segments counted today (UTC) from the ledger's stream: a few seconds behind the sends"
    )
    history: list[SettingsChangeView] = Field(description="every change, oldest first")
    updated_at: str | None = Field(description="null: never set (every field its default)")
    updated_by: str | None = Field(description="the admin principal that changed it last")
    version: int = Field(description="moves by one with every change")
    callback_secret: CallbackSecretView
    new_secret: str | None = Field(
        default=None, description="the callback secret just made: shown in this answer only, store it now"
    )
