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
