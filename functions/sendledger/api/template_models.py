"""The template routes' bodies and answers (documented in the OpenAPI document).

A version's body is checked by the domain (domain/template_rules.py), not by a schema here:
every problem is named in one 422 answer, as the template rules say, rather than the first one
a schema meets.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from sendledger.api.models import LOCALE, Model, Strict
from sendledger.domain.template_rules import ID_PATTERN

TEMPLATE_ID_PATTERN = ID_PATTERN


class PreviewRequest(Strict):
    channel: Literal["email", "sms"] = "email"
    params: dict[str, str] = Field(default_factory=dict, max_length=50)
    locale: str | None = LOCALE


class VersionSummaryView(Model):
    id: str
    version: str
    owner: Literal["caller", "deployment"]
    sha256: str = Field(description="SHA-256 of the version's canonical body (sorted keys, compact, UTF-8)")
    channels: list[Literal["email", "sms"]]
    locales: list[str]
    published_at: str | None
    retired_at: str | None


class TemplateListView(Model):
    templates: list[VersionSummaryView]


class TemplateVersionView(VersionSummaryView):
    body: dict[str, object] = Field(description="the version as published: params, email, sms, locales, tracking")
    outcome: Literal["created", "unchanged"] | None = Field(default=None, description="a PUT's: written or already so")
    notes: list[str] | None = Field(default=None, description="what publishing changed (a reset mail's tracking)")


class SmsPreview(Model):
    encoding: Literal["GSM-7", "UCS-2"]
    units: int = Field(description="septets (GSM-7) or UTF-16 code units (UCS-2)")
    segments: int = Field(description="what a carrier bills")


class PreviewView(Model):
    id: str
    version: str
    owner: Literal["caller", "deployment"]
    channel: Literal["email", "sms"]
    locale: str | None = Field(description="the locale rendered (null: the template's default)")
    subject: str | None
    text: str
    html: str | None
    tracking: bool
    sms: SmsPreview | None = None
