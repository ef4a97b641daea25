"""Versioned message templates shipped beside the code (functions/sendledger/templates/).

A template is `templates/<id>/<version>.json`; params are substituted with `${name}`; the HTML
part escapes them. Internal templates (password-reset) are only rendered by their own flow,
so a caller can never make sendledger store a reset link. `"tracking": false` (the reset's)
tells every provider not to track opens and clicks: click tracking rewrites each link into a
redirect through the provider, which would carry and log the reset token.
"""

from __future__ import annotations

import html
import json
import re
from functools import cache
from pathlib import Path
from string import Template as StringTemplate
from typing import Any

from sendledger.domain.errors import (
    InternalTemplate,
    TemplateChannelUnsupported,
    TemplateParamsInvalid,
    UnknownTemplate,
)
from sendledger.domain.recipients import Channel
from sendledger.domain.values import value

TEMPLATE_ROOT = Path(__file__).resolve().parent.parent / "templates"
_SAFE_PART = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
MAX_PARAM_LENGTH = 2000


@value
class Rendered:
    subject: str | None
    text: str
    html: str | None
    tracking: bool = True  # False: the provider must leave links as they are and add no open pixel


@cache
def _load(template_id: str, version: str) -> dict[str, Any] | None:
    if not (_SAFE_PART.match(template_id) and _SAFE_PART.match(version)):
        return None
    path = TEMPLATE_ROOT / template_id / f"{version}.json"
    if not path.is_file():
        return None
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def check(
    template_id: str,
    version: str,
    channel: Channel,
    params: dict[str, str],
    *,
    internal: bool = False,
    channel_field: str = "channel",
) -> None:
    """Raise a TemplateRefused error unless this template renders for this channel with these params."""
    spec = _load(template_id, version)
    if spec is None:
        raise UnknownTemplate(
            f"no template {template_id!r} version {version!r}",
            [{"field": "template", "message": "unknown id or version"}],
        )
    if spec.get("internal", False) and not internal:
        raise InternalTemplate(
            f"template {template_id!r} is sent only by sendledger's own flow (POST /v1/password-resets)",
            [{"field": "template", "message": "internal template"}],
        )
    if channel.value not in spec:
        raise TemplateChannelUnsupported(
            f"template {template_id!r} v{version} has no {channel.value} variant",
            [{"field": channel_field, "message": "not supported by template"}],
        )
    required = set(spec.get("params", []))
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
        raise TemplateParamsInvalid(f"params do not match template {template_id!r} v{version}", problems)


def render(template_id: str, version: str, channel: Channel, params: dict[str, str]) -> Rendered:
    spec = _load(template_id, version)
    if spec is None:
        raise UnknownTemplate(f"no template {template_id!r} version {version!r}")
    variant: dict[str, str] = spec[channel.value]
    escaped = {name: html.escape(value) for name, value in params.items()}
    subject = variant.get("subject")
    return Rendered(
        subject=_one_line(StringTemplate(subject).safe_substitute(params)) if subject else None,
        text=StringTemplate(variant["text"]).safe_substitute(params),
        html=StringTemplate(variant["html"]).safe_substitute(escaped) if "html" in variant else None,
        tracking=bool(spec.get("tracking", True)),
    )


def _one_line(text: str) -> str:
    # A subject is a header: params must not be able to inject CR/LF.
    return " ".join(text.split())
