"""Domain failures. Each maps to one RFC 9457 problem type at the HTTP edge (api/problems.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ECHO_LIMIT = 200  # characters of a caller's input a problem detail quotes back


def echo(value: str) -> str:
    """The caller's input quoted in a detail, cut at ECHO_LIMIT characters: an answer never
    grows with what was sent (a 20,000-character id is not answered back whole)."""
    if len(value) <= ECHO_LIMIT:
        return repr(value)
    return f"{value[:ECHO_LIMIT]!r}… ({len(value) - ECHO_LIMIT} more characters)"


@dataclass
class DomainError(Exception):
    detail: str
    errors: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(self.detail)


class InvalidRequest(DomainError):
    """The request is well-formed JSON but makes no sense (400)."""


class TemplateRefused(DomainError):
    """The template cannot carry this request (422); each subclass says why."""


class UnknownTemplate(TemplateRefused):
    """No such template id and version."""


class InternalTemplate(TemplateRefused):
    """A template only sendledger's own flows send (the password-reset mail)."""


class TemplateChannelUnsupported(TemplateRefused):
    """The template has no variant for the channel asked for."""


class TemplateParamsInvalid(TemplateRefused):
    """Params missing, not the template's, or too long."""


class TemplateRetired(TemplateRefused):
    """The version is retired: no new send (resends and evidence still render it)."""


class IdempotencyKeyMissing(DomainError):
    """POST /v1/messages without Idempotency-Key nor event_id (400)."""


class IdempotencyKeyReused(DomainError):
    """Same key, different payload fingerprint (422)."""


@dataclass
class IdempotencyKeyInFlight(DomainError):
    """The first request with this key has not finished (409 + Retry-After)."""

    retry_after_seconds: int = 1


@dataclass
class DependencyUnavailable(DomainError):
    """DynamoDB or another dependency failed; state is consistent, try again (503)."""

    retry_after_seconds: int = 2


class UnknownCaller(DomainError):
    """The request's IAM identity names no user, role or root, or a federated user no tenant names (403)."""


class NotAdmin(DomainError):
    """An /v1/admin/* request from a principal the settings do not name an admin (403)."""
