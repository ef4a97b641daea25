"""The provider registry: one line per provider.

A provider is a slice, ``sendledger/providers/<name>/``: its package's ``SLICE`` (the port,
ports/providers.py), its ``settings.py`` fragment, and the mirrors ``infra/providers/<name>.py``
(its AWS resources) and ``local/simulator/providers/<name>.py`` (its simulator), all found by
the name below. Adding a provider is its folders, one line here, and its docs.

Pure: names and imports only, so settings, the domain's callers and the cold start can read it.
"""

from __future__ import annotations

import importlib
from enum import StrEnum
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sendledger.domain.recipients import Channel
    from sendledger.ports.providers import ProviderSlice
    from sendledger.settings import Fragment


class Provider(StrEnum):
    SES = "ses"
    SNS = "sns"
    SENDGRID = "sendgrid"
    MAILGUN = "mailgun"
    INFRAI = "infrai"


PACKAGE = "sendledger.providers"


@cache
def slice_of(name: str) -> ProviderSlice:
    """The slice of a registered provider (KeyError for a name the registry does not list)."""
    provider = Provider(name) if name in Provider._value2member_map_ else None
    if provider is None:
        raise KeyError(f"no provider {name!r} is registered")
    found: ProviderSlice = importlib.import_module(f"{PACKAGE}.{provider.value}").SLICE
    return found


@cache
def fragment_of(name: str) -> type[Fragment]:
    """The settings fragment class of a registered provider (its slice's settings.py)."""
    fragment: type[Fragment] = importlib.import_module(f"{PACKAGE}.{Provider(name).value}.settings").SETTINGS
    return fragment


def carriers(channel: Channel) -> list[Provider]:
    """The registered providers that carry `channel`, in registry order."""
    return [provider for provider in Provider if channel in slice_of(provider.value).channels]


def source_of(provider: str) -> str:
    """The event source of a provider's messages (its watermark, its events' dedupe keys)."""
    return slice_of(provider).source
