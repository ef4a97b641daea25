"""Sortable random identifiers (ULID layout: 48-bit milliseconds + 80 random bits, Crockford)."""

from __future__ import annotations

import secrets
from datetime import datetime

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid(moment: datetime) -> str:
    value = (int(moment.timestamp() * 1000) << 80) | secrets.randbits(80)
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def message_id(moment: datetime) -> str:
    return f"msg_{ulid(moment)}"


def reset_id(moment: datetime) -> str:
    return f"rst_{ulid(moment)}"
