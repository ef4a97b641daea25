"""The ledger table's key layout: every item family, in one place.

| family | pk | sk | written by | size |
|---|---|---|---|---|
| message, also its key's idempotency record | `MSG#<message id>` | `MSG` | send, outcome, poller | 0.6-1 KB |
| recipient: suppression, last send, transients | `SUP#<recipient key>` | `STATE` | send, events, admin | 0.2-1 KB |
| escalation timer | `MSG#<message id>` | `ESC` | send with escalation, poller | 0.5 KB |
| password reset, per caller + account | `RESET#<caller id>#<account>` | `ACTIVE` | request, poller, consume | 0.3 KB |
| receipt: what a send's events proved | `MSG#<message id>` | `RCPT` | delivery events | 0.2-1 KB |
| SMS receipt: provider id to message | `PMID#<provider id>` | `PMID` | publisher, status records | 0.2-1 KB |
| event that matched no message (TTL) | `EVT#<source>#<event id>` | `EVT` | events | 0.2 KB |
| source watermark and log cursor | `WM#<source>` | `WM` | poller only, never a send | 0.1 KB |
| webhook token used (TTL; SHA-256 only) | `WHTOKEN#<source>#<token hash>` | `TOKEN` | signed webhooks | 0.2 KB |
| caller settings (callback, test mode, flags, SMS) | `CALLER#<caller id>` | `SETTINGS` | admin routes | 0.2-2 KB |
| SMS segments of a caller's day (TTL) | `CALLER#<caller id>` | `SMSDAY#<YYYY-MM-DD>` | publisher | 0.1 KB |
| a caller's template version | `TEMPLATE#<caller id>` | `V#<id>#<version>` | template routes | 0.5-350 KB |

Indexes: `due-work` (`due_kind`/`due_at`: work the poller must revisit; `due_kind` is
`<kind>#<shard>`) and `evidence` (`ev_day`/`created_at`: a message item, by its owner, UTC day
and shard, `<owner>#<day>#<shard>`, KEYS_ONLY; written once, with the intent, and never
changed: 1 write unit per send). Both are write-sharded by the message id, so no partition key
of either takes more than 1/16 of the sends (one caller's day included).

History entries are attributes `h:<entry key>` (JSON) of the item whose state they explain,
each written with `attribute_not_exists`, so the write that adds one can never overwrite
another; nothing ever removes one. Entries are compact JSON (one-letter fields; an event id
that starts with its receipt's provider message id is stored without it), and items leave out
what their key implies (the message id, the recipient key): a write is billed per started KB of
the item, so a send's replay and an event's write stay in one unit. An act's entry key is
`<epoch ms>.<step>.<random>`; a delivery event's is `e.<hash of its dedupe key>`, so a
redelivered event finds its own entry and changes nothing (the entry's own `at` orders the
history).

A keyed send's message id is derived from the caller-scoped idempotency key (and a generation,
bumped only when an expired key is used again), so the message item is also the key's record:
one item instead of two on every send, and a replay is answered by the item it collides with.
"""

from __future__ import annotations

import hashlib
import secrets
import zlib
from datetime import UTC, datetime

from sendledger.domain.ids import crockford

MESSAGE_SK = "MSG"
MESSAGE_RECEIPT_SK = "RCPT"
ESCALATION_SK = "ESC"
RECIPIENT_SK = "STATE"
RESET_SK = "ACTIVE"
RECEIPT_SK = "PMID"
EVENT_SK = "EVT"
WATERMARK_SK = "WM"
CALLER_SETTINGS_SK = "SETTINGS"
SMS_DAY_SK_PREFIX = "SMSDAY#"
HISTORY_PREFIX = "h:"
# Partition keys of the indexes are `<kind>#<shard>` and `<owner>#<day>#<shard>`: no single hot value.
# Sixteen keeps each one's share of a caller's sends (1/16) below the bench's hot-partition bar (1/8).
DUE_SHARDS = 16
EVIDENCE_SHARDS = 16
# The partitions of one day an export reads at once: each shard, and the unsharded one.
EVIDENCE_PARTITIONS_PER_DAY = EVIDENCE_SHARDS + 1


MESSAGE_PK_PREFIX = "MSG#"


def message_pk(message_id: str) -> str:
    return f"{MESSAGE_PK_PREFIX}{message_id}"


def recipient_pk(recipient_key: str) -> str:
    return f"SUP#{recipient_key}"


RESET_PK_PREFIX = "RESET#"


def reset_pk(owner: str, account_id: str) -> str:
    """The caller id first: it never contains "#", the account id may."""
    return f"{RESET_PK_PREFIX}{owner}#{account_id}"


def reset_key_parts(pk: str) -> tuple[str, str]:
    """(owner, account id) of a reset item's pk."""
    owner, _, account_id = pk.removeprefix(RESET_PK_PREFIX).partition("#")
    return owner, account_id


RECEIPT_PK_PREFIX = "PMID#"


def receipt_pk(provider_message_id: str) -> str:
    return f"{RECEIPT_PK_PREFIX}{provider_message_id}"


def watermark_pk(source: str) -> str:
    return f"WM#{source}"


CALLER_PK_PREFIX = "CALLER#"


def caller_pk(caller_id: str) -> str:
    """One item per caller; never read by a send's write path (a cached read at most)."""
    return f"{CALLER_PK_PREFIX}{caller_id}"


def sms_day_sk(day: str) -> str:
    """A caller's SMS segments of one UTC day (YYYY-MM-DD), beside its settings."""
    return f"{SMS_DAY_SK_PREFIX}{day}"


def entry_key(at: datetime, step: int, derived_from: str | None = None) -> str:
    if derived_from is not None:
        # A delivery event's entry: the same event always names the same attribute.
        return "e." + crockford(int.from_bytes(hashlib.sha256(derived_from.encode()).digest()[:10], "big"), 16)
    return f"{int(at.timestamp() * 1000):013d}.{step:02d}.{crockford(secrets.randbits(60), 12)}"


def history_attribute(entry_key: str) -> str:
    return f"{HISTORY_PREFIX}{entry_key}"


def evidence_partition(owner: str, at: datetime, message_id: str) -> str:
    """The evidence index's partition of a message: its caller's, its UTC day's, its shard."""
    return f"{_evidence_day(owner, at)}#{_shard(message_id, EVIDENCE_SHARDS)}"


def evidence_partitions(owner: str, day: datetime) -> list[str]:
    """Every partition one caller's messages of one UTC day can be in: each shard, and the
    unsharded one that messages written before sharding are in."""
    unsharded = _evidence_day(owner, day)
    return [unsharded, *(f"{unsharded}#{shard}" for shard in range(EVIDENCE_SHARDS))]


def _evidence_day(owner: str, at: datetime) -> str:
    return f"{owner}#{at.astimezone(UTC):%Y-%m-%d}"


def due_shard(kind: str, message_id: str) -> str:
    return f"{kind}#{_shard(message_id, DUE_SHARDS)}"


def _shard(message_id: str, shards: int) -> int:
    return zlib.crc32(message_id.encode()) % shards
