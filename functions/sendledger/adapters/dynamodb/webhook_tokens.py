"""Webhook tokens seen (the replay guard of a provider that signs single-use tokens): one
conditional put per webhook, TTL'd.

Item `WHTOKEN#<source>#<sha256 of the token>` / `TOKEN` with the body's SHA-256: never the
token itself. A claim is free when the item is absent, released or expired. Through the token's
model (modelled.py): the webhook function's path, never the api's send path.
"""

from __future__ import annotations

import contextlib
from datetime import datetime

from sendledger.adapters.dynamodb.table import ConditionFailed, Table
from sendledger.ports.webhooks import TokenClaim

TOKEN_SK = "TOKEN"  # noqa: S105 - a sort key, not a secret


def token_pk(source: str, token_hash: str) -> str:
    return f"WHTOKEN#{source}#{token_hash}"


class WebhookTokens:
    def __init__(self, table: Table) -> None:
        self.table = table

    def claim(self, source: str, token_hash: str, body_hash: str, expires_at: datetime, now: datetime) -> TokenClaim:
        from sendledger.adapters.dynamodb import modelled
        from sendledger.adapters.dynamodb.models import WebhookTokenItem as Item

        item = Item(token_pk(source, token_hash), TOKEN_SK, body_hash=body_hash, expires_at=expires_at)
        # Free when absent, released, or expired (TTL deletes lazily).
        free = Item.pk.does_not_exist() | (Item.released == True) | (Item.expires_at < now)  # noqa: E712
        try:
            modelled.put(self.table, item, free)
        except ConditionFailed as failed:
            old = modelled.read(Item, failed.old)
            return TokenClaim.SAME_BODY if old is not None and old.body_hash == body_hash else TokenClaim.REPLAYED
        return TokenClaim.CLAIMED

    def release(self, source: str, token_hash: str, body_hash: str) -> None:
        """The claimed webhook was not applied: its retry (same token) may claim it again."""
        from sendledger.adapters.dynamodb import modelled
        from sendledger.adapters.dynamodb.models import WebhookTokenItem as Item

        ours = Item.body_hash == body_hash
        with contextlib.suppress(ConditionFailed):  # claimed by another body since: not ours to release
            modelled.update(self.table, token_pk(source, token_hash), TOKEN_SK, [Item.released.set(True)], ours)
