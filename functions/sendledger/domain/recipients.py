"""Recipient parsing and the canonical key suppression and eligibility are tracked under.

Email: syntax only (no DNS at send time), IDN domains kept in their ASCII (punycode) form so the
same mailbox always maps to one key. SMS: E.164 via phonenumbers.
"""

from __future__ import annotations

import hashlib
import hmac
from enum import StrEnum

from sendledger.domain.errors import InvalidRequest
from sendledger.domain.values import value


class Channel(StrEnum):
    EMAIL = "email"
    SMS = "sms"


@value
class Recipient:
    channel: Channel
    address: str  # what the provider is given: ASCII email or E.164 number

    @property
    def key(self) -> str:
        """Case-folded identity used for suppression; one mailbox, one key."""
        return f"{self.channel.value}:{self.address.lower()}"

    @property
    def fingerprint(self) -> str:
        return fingerprint_of(self.key)


# Local stack and tests only; not a secret. Deployed, the composition root installs the generated key.
LOCAL_FINGERPRINT_KEY = b"sendledger-local-only-fingerprint-key"


class _FingerprintKey:
    value: bytes = LOCAL_FINGERPRINT_KEY


def use_fingerprint_key(key: bytes) -> None:
    """Key every later fingerprint with `key` (once per container, before any event is read)."""
    if not key:
        raise ValueError("the fingerprint key is empty")
    _FingerprintKey.value = key


def fingerprint_of(recipient_key: str, key: bytes | None = None) -> str:
    """Short id for logs, history and event ids (raw addresses never reach logs).

    Keyed (HMAC-SHA256): without the deployment's key, guessing an address does not confirm it.
    """
    digest = hmac.new(key or _FingerprintKey.value, recipient_key.encode(), hashlib.sha256)
    return digest.hexdigest()[:16]


def parse_recipient(channel: Channel, raw: str, field: str = "to") -> Recipient:
    """`field` names the input in the error, as the caller sent it (`to`, `email`, `recipient`)."""
    if any(ch in raw for ch in "\r\n\x00"):
        raise InvalidRequest("recipient contains control characters", [_field_error(field)])
    if channel is Channel.EMAIL:
        return Recipient(channel, _parse_email(raw, field))
    return Recipient(channel, _parse_phone(raw, field))


def recipient_from_key(raw: str, field: str = "recipient") -> Recipient:
    """Parse a recipient given without a channel (GET /v1/suppressions/{recipient})."""
    channel = Channel.SMS if raw.strip().startswith("+") else Channel.EMAIL
    return parse_recipient(channel, raw.strip(), field)


def _parse_email(raw: str, field: str) -> str:
    try:
        # Email providers do not all accept SMTPUTF8 local parts; IDN domains travel as punycode.
        from email_validator import EmailNotValidError, validate_email  # loaded on first email

        result = validate_email(raw, check_deliverability=False, allow_smtputf8=False)
    except EmailNotValidError as exc:
        raise InvalidRequest(f"invalid email address: {exc}", [_field_error(field)]) from exc
    return str(result.ascii_email or result.normalized)


def _parse_phone(raw: str, field: str) -> str:
    if not raw.startswith("+"):
        raise InvalidRequest("phone numbers must be in E.164 form (+<country><number>)", [_field_error(field)])
    try:
        import phonenumbers  # loaded on first SMS (about 16 ms)

        number = phonenumbers.parse(raw, None)
    except phonenumbers.NumberParseException as exc:
        raise InvalidRequest("invalid E.164 phone number", [_field_error(field)]) from exc
    if not phonenumbers.is_valid_number(number):
        raise InvalidRequest("invalid E.164 phone number", [_field_error(field)])
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def _field_error(name: str) -> dict[str, str]:
    return {"field": name, "message": "invalid recipient"}
