"""A template version as data: its declared params, and its words per channel and locale.

A version is immutable once published: its canonical body (sorted keys, no insignificant
whitespace, UTF-8) is what its SHA-256 proves, so a reviewer can show which words went out.
The rules a version is checked against are domain/template_rules.py.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from sendledger.domain.recipients import Channel
from sendledger.domain.values import value

RESET_TEMPLATE_ID = "password-reset"  # sent only by the reset flow, the caller's or the deployment's
RESET_LINK_PARAM = "reset_link"  # a reset template must declare it
RESET_WINDOW_PARAM = "reset_window"  # optional: RESET_WINDOW_SECONDS in words ("10 minutes")


class TemplateOwner(StrEnum):
    """Whose template a send used: the caller's own, or the deployment's (templates_dir)."""

    CALLER = "caller"
    DEPLOYMENT = "deployment"


@value
class Variant:
    """One channel's words: an email's subject, text and optional HTML; an SMS's text."""

    text: str
    subject: str | None = None
    html: str | None = None

    def as_json(self) -> dict[str, str]:
        parts = {"subject": self.subject, "text": self.text, "html": self.html}
        return {name: part for name, part in parts.items() if part is not None}


@value
class TemplateVersion:
    id: str
    version: str
    params: tuple[str, ...]
    variants: Mapping[Channel, Variant]  # the default locale's
    locales: Mapping[str, Mapping[Channel, Variant]]
    tracking: bool = True
    internal: bool = False  # sent only by sendledger's own flow (the reset mail)

    def body(self) -> dict[str, Any]:
        """The version as published, defaults spelled out: what the hash is taken over."""
        return {
            "params": list(self.params),
            **{channel.value: variant.as_json() for channel, variant in self.variants.items()},
            "locales": {
                tag: {channel.value: variant.as_json() for channel, variant in variants.items()}
                for tag, variants in self.locales.items()
            },
            "tracking": self.tracking,
        }

    def canonical(self) -> bytes:
        return canonical_json(self.body())

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.canonical()).hexdigest()

    def channels(self) -> frozenset[Channel]:
        return frozenset(self.variants)

    def variant(self, channel: Channel, locale: str | None) -> tuple[Variant, str | None] | None:
        """The words for `channel` in the closest locale (pt-BR -> pt -> default) and that locale
        (None: the default's); None when the template has no variant for the channel."""
        for tag in fallback_chain(locale):
            found = self.locales.get(tag, {}).get(channel)
            if found is not None:
                return found, tag
        default = self.variants.get(channel)
        return (default, None) if default is not None else None


def canonical_json(body: Mapping[str, Any]) -> bytes:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def fallback_chain(locale: str | None) -> list[str]:
    """`pt-BR` -> [`pt-BR`, `pt`]; tags compare case-insensitively on the language (BCP 47)."""
    if not locale:
        return []
    parts = locale.split("-")
    chain = ["-".join(parts[:size]) for size in range(len(parts), 0, -1)]
    return [normal_tag(tag) for tag in chain]


def normal_tag(tag: str) -> str:
    language, *rest = tag.split("-")
    return "-".join([language.lower(), *(part.upper() if len(part) == 2 else part for part in rest)])
