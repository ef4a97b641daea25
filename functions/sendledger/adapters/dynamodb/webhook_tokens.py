"""Webhook tokens seen (the replay guard of a provider that signs single-use tokens): one
conditional put per webhook, TTL'd.

Item `WHTOKEN#<source>#<sha256 of the token>` / `TOKEN` with the body's SHA-256: never the
token itself. A claim is free when the item is absent, released or expired.
"""

from __future__ import annotations

import contextlib
from datetime import datetime

from sendledger import names
from sendledger.adapters.dynamodb.expressions import Expression, Update, encode_item
from sendledger.adapters.dynamodb.table import ConditionFailed, Table
from sendledger.ports.webhooks import TokenClaim

TOKEN_SK = "TOKEN"  # noqa: S105 - a sort key, not a secret


def token_pk(source: str, token_hash: str) -> str:
    return f"WHTOKEN#{source}#{token_hash}"


class WebhookTokens:
    def __init__(self, table: Table) -> None:
        self.table = table

    def claim(self, source: str, token_hash: str, body_hash: str, expires_at: datetime, now: datetime) -> TokenClaim:
        item = encode_item(
            {
                names.TABLE_PARTITION_KEY: token_pk(source, token_hash),
                names.TABLE_SORT_KEY: TOKEN_SK,
                "body_hash": body_hash,
                names.TABLE_TTL_ATTRIBUTE: int(expires_at.timestamp()),
            }
        )
        expression = Expression()
        condition = (
            expression.absent(names.TABLE_PARTITION_KEY)
            | expression.equals("released", True)
            | expression.below(names.TABLE_TTL_ATTRIBUTE, int(now.timestamp()))  # TTL deletes lazily
        )
        try:
            self.table.put(item, condition, expression)
        except ConditionFailed as failed:
            old = (failed.old or {}).get("body_hash", {}).get("S")
            return TokenClaim.SAME_BODY if old == body_hash else TokenClaim.REPLAYED
        return TokenClaim.CLAIMED

    def release(self, source: str, token_hash: str, body_hash: str) -> None:
        """The claimed webhook was not applied: its retry (same token) may claim it again."""
        update = Update().set("released", True)
        update.when(update.equals("body_hash", body_hash))
        with contextlib.suppress(ConditionFailed):  # claimed by another body since: not ours to release
            self.table.update(token_pk(source, token_hash), TOKEN_SK, update)
