"""Password-reset tokens: 32 random bytes, URL-safe; only the SHA-256 is ever stored."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets


def mint_token() -> str:
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def hashes_match(stored_hash: str, presented_token: str) -> bool:
    return hmac.compare_digest(stored_hash.encode(), token_hash(presented_token).encode())


def reset_link(url_template: str, token: str) -> str:
    return url_template.replace("{token}", token)


def window_words(seconds: int) -> str:
    """A reset's lifetime as its mail says it: "10 minutes", "1 hour", "90 seconds"."""
    for unit, size in (("day", 86_400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"
