"""Callers' callback secrets in Secrets Manager: one secret per caller, `<prefix><caller id>`.

The value is JSON, `{"current": ..., "previous": ..., "rotated_at": ...}` (`previous` only while
a rotation is open). The api reads it fresh (an admin's rotation starts from what is stored);
the callbacks Lambda through a cache of SECRET_MAX_AGE: a rotation reaches every container
within that, which is why ending one waits as long (usecases/callers.py). Values are returned
to the code that signs with them and are never logged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from sendledger.adapters import sdk
from sendledger.domain.callbacks import SECRET_CACHE, SigningKeys
from sendledger.domain.callers import CallerId
from sendledger.domain.clock import Clock, iso, parse_iso
from sendledger.domain.errors import DependencyUnavailable

SECRET_MAX_AGE = SECRET_CACHE  # the callbacks Lambda's cache
_NOT_FOUND = "ResourceNotFoundException"
_EXISTS = "ResourceExistsException"
# Reads and whole-value writes: safe to retry.
SECRETS_CONFIG = sdk.config(retries=sdk.STANDARD_RETRIES, read_timeout=5, connect_timeout=2)


@dataclass
class SecretsManagerCallbackSecrets:
    prefix: str
    clock: Clock
    max_age: timedelta = timedelta(0)  # 0: every read is fresh (the api)
    client: Any = None
    _cache: dict[CallerId, tuple[datetime, SigningKeys | None]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.client = self.client or sdk.client("secretsmanager", SECRETS_CONFIG)

    def name(self, caller_id: CallerId) -> str:
        return f"{self.prefix}{caller_id}"

    def keys(self, caller_id: CallerId) -> SigningKeys | None:
        now = self.clock.now()
        cached = self._cache.get(caller_id)
        if cached is not None and timedelta(0) <= now - cached[0] < self.max_age:
            return cached[1]
        try:
            text = self.client.get_secret_value(SecretId=self.name(caller_id))["SecretString"]
        except ClientError as exc:
            if _code(exc) != _NOT_FOUND:
                raise DependencyUnavailable(f"callback secrets unavailable: {_code(exc)}") from None
            found = None
        except BotoCoreError as exc:
            raise DependencyUnavailable(f"callback secrets unavailable: {type(exc).__name__}") from None
        else:
            found = keys_from(text)
        if self.max_age:
            self._cache[caller_id] = (now, found)
        return found

    def put(self, caller_id: CallerId, keys: SigningKeys) -> None:
        text = keys_text(keys)
        name = self.name(caller_id)
        try:
            try:
                self.client.put_secret_value(SecretId=name, SecretString=text)
            except ClientError as exc:
                if _code(exc) != _NOT_FOUND:
                    raise
                self._create(name, text)
        except ClientError as exc:
            raise DependencyUnavailable(f"callback secrets unavailable: {_code(exc)}") from None
        except BotoCoreError as exc:
            raise DependencyUnavailable(f"callback secrets unavailable: {type(exc).__name__}") from None
        self._cache.pop(caller_id, None)

    def _create(self, name: str, text: str) -> None:
        try:
            self.client.create_secret(
                Name=name,
                SecretString=text,
                Description="sendledger: one caller's callback signing secrets (Sendledger-Signature v1)",
            )
        except ClientError as exc:
            if _code(exc) != _EXISTS:
                raise
            self.client.put_secret_value(SecretId=name, SecretString=text)  # created meanwhile


def keys_text(keys: SigningKeys) -> str:
    value: dict[str, str] = {"current": keys.current}
    if keys.previous is not None:
        value["previous"] = keys.previous
    if keys.rotated_at is not None:
        value["rotated_at"] = iso(keys.rotated_at)
    return json.dumps(value)


def keys_from(text: str) -> SigningKeys | None:
    try:
        value = json.loads(text)
        current = value["current"]
    except (ValueError, KeyError, TypeError):
        return None  # not a value of ours: as if the caller had no secret (its callbacks fail, logged)
    if not isinstance(current, str) or not current:
        return None
    previous = value.get("previous")
    rotated_at = value.get("rotated_at")
    return SigningKeys(
        current,
        previous if isinstance(previous, str) and previous else None,
        parse_iso(rotated_at) if isinstance(rotated_at, str) else None,
    )


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", "?"))
