"""Rendering a template version for a channel, a locale and params, and checking that it can.

Params are substituted with `${name}`; the HTML part escapes them; a subject stays one line
whatever a param holds. A version marked internal (password-reset) is rendered only by its own
flow, so a caller can never make sendledger store a reset link. `tracking: false` (the reset's)
tells every provider not to track opens and clicks: click tracking rewrites each link into a
redirect through the provider, which would carry and log the reset token.
"""

from __future__ import annotations

import html
from string import Template as StringTemplate

from sendledger.domain.errors import InternalTemplate, TemplateChannelUnsupported, TemplateParamsInvalid
from sendledger.domain.recipients import Channel
from sendledger.domain.sms_segments import SmsSegments, sms_segments
from sendledger.domain.template_versions import TemplateVersion
from sendledger.domain.values import value

MAX_PARAM_LENGTH = 2000


@value
class Rendered:
    subject: str | None
    text: str
    html: str | None
    tracking: bool = True  # False: the provider must leave links as they are and add no open pixel
    locale: str | None = None  # the locale whose words these are (None: the template's default)

    def segments(self) -> SmsSegments:
        """How a carrier encodes this text as an SMS and the segments it bills."""
        return sms_segments(self.text)


def check(
    version: TemplateVersion,
    channel: Channel,
    params: dict[str, str],
    *,
    internal: bool = False,
    channel_field: str = "channel",
) -> None:
    """Raise a TemplateRefused error unless this version renders for this channel with these params."""
    if version.internal and not internal:
        raise InternalTemplate(
            f"template {version.id!r} is sent only by sendledger's own flow (POST /v1/password-resets)",
            [{"field": "template", "message": "internal template"}],
        )
    if channel not in version.channels():
        raise TemplateChannelUnsupported(
            f"template {version.id!r} v{version.version} has no {channel.value} variant",
            [{"field": channel_field, "message": "not supported by template"}],
        )
    required = set(version.params)
    missing = sorted(required - params.keys())
    unexpected = sorted(params.keys() - required)
    problems = [{"field": f"params.{name}", "message": "required"} for name in missing]
    problems += [{"field": f"params.{name}", "message": "not a param of this template"} for name in unexpected]
    problems += [
        {"field": f"params.{name}", "message": f"longer than {MAX_PARAM_LENGTH} characters"}
        for name, value in params.items()
        if len(value) > MAX_PARAM_LENGTH
    ]
    if problems:
        raise TemplateParamsInvalid(f"params do not match template {version.id!r} v{version.version}", problems)


def used_locale(version: TemplateVersion, channel: Channel, locale: str | None) -> str | None:
    """The locale a send asking for `locale` is rendered in (None: the template's default)."""
    found = version.variant(channel, locale)
    return found[1] if found else None


def render(version: TemplateVersion, channel: Channel, params: dict[str, str], locale: str | None = None) -> Rendered:
    found = version.variant(channel, locale)
    if found is None:
        raise TemplateChannelUnsupported(f"template {version.id!r} v{version.version} has no {channel.value} variant")
    variant, used = found
    escaped = {name: html.escape(value) for name, value in params.items()}
    subject = variant.subject
    return Rendered(
        subject=_one_line(StringTemplate(subject).safe_substitute(params)) if subject else None,
        text=StringTemplate(variant.text).safe_substitute(params),
        html=StringTemplate(variant.html).safe_substitute(escaped) if variant.html is not None else None,
        tracking=version.tracking,
        locale=used,
    )


def _one_line(text: str) -> str:
    # A subject is a header: params must not be able to inject CR/LF.
    return " ".join(text.split())
