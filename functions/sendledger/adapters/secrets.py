"""The recipient-fingerprint key, from the Secrets Manager secret the stack generates."""

from __future__ import annotations

from sendledger.domain.recipients import LOCAL_FINGERPRINT_KEY


def fingerprint_key(secret_id: str) -> bytes:
    """The deployment's key; the local-only key when no secret is configured (local stack, tests).

    Called once per container by the composition root, which keeps the key for the container's
    life; the secret is never rotated (see infra/stack.py), so nothing needs re-reading.
    """
    if not secret_id:
        return LOCAL_FINGERPRINT_KEY
    from aws_lambda_powertools.utilities import parameters  # boto3 is loaded by then anyway

    value = parameters.get_secret(secret_id)
    key = value.encode() if isinstance(value, str) else value
    if not isinstance(key, bytes) or not key:
        raise ValueError(f"secret {secret_id} holds no fingerprint key")
    return key


# Provider credentials: re-read at most this often, so a rotated secret is picked up.
PROVIDER_SECRET_MAX_AGE_SECONDS = 300


def provider_secret(secret_id: str) -> str:
    """A provider's API key or verification key from Secrets Manager, through the Powertools cache.

    The value is returned to the adapter that uses it and never logged.
    """
    from aws_lambda_powertools.utilities import parameters

    value = parameters.get_secret(secret_id, max_age=PROVIDER_SECRET_MAX_AGE_SECONDS)
    text = value.decode() if isinstance(value, bytes) else value
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"secret {secret_id} is empty")
    return text.strip()
