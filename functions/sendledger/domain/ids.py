"""Sortable random identifiers (ULID layout: 48-bit milliseconds + 80 random bits, Crockford)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def crockford(value: int, length: int) -> str:
    """The low 5 * `length` bits of `value`, most significant first."""
    chars = []
    for _ in range(length):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def ulid(moment: datetime) -> str:
    return crockford((int(moment.timestamp() * 1000) << 80) | secrets.randbits(80), 26)


def message_id(moment: datetime) -> str:
    return f"msg_{ulid(moment)}"


def keyed_message_id(scoped_key: str, generation: int = 0) -> str:
    """The message id of a keyed send: the same key (and generation) always names the same message."""
    material = scoped_key if generation == 0 else f"{scoped_key}\n{generation}"
    return f"msg_{crockford(int.from_bytes(hashlib.sha256(material.encode()).digest()[:17], 'big'), 26)}"


def reset_id(moment: datetime) -> str:
    return f"rst_{ulid(moment)}"


def reset_message_id(reset_id: str) -> str:
    """The id of a reset's mail: derived, so the reset's evidence is found from its id alone."""
    digest = hashlib.sha256(f"reset\n{reset_id}".encode()).digest()[:17]
    return f"msg_{crockford(int.from_bytes(digest, 'big'), 26)}"
