"""In-process moto handles one request at a time, as DynamoDB serializes conflicting writes.

moto's in-process backend is not thread-safe (unpatched, its TransactWriteItems deep-copied a
table for rollback while another thread could be writing to it: "dictionary changed size
during iteration"; local/moto_journal.py, installed here too, replaces those copies). The
poller applies independent recipients' events on several threads, so every request that
reaches moto's botocore stubber is taken under one lock. Threads still interleave between
requests, which is where the product's own races live.
"""

from __future__ import annotations

from local.moto_version import require_supported_moto

require_supported_moto("local/moto_serial.py")

import threading
from typing import Any

from moto.core.botocore_stubber import BotocoreStubber

from local import moto_journal, moto_sqs

_LOCK = threading.RLock()
_MARK = "_sendledger_serialized"


def install() -> None:
    moto_journal.install()
    moto_sqs.install()
    current = BotocoreStubber.__call__
    if getattr(current, _MARK, False):
        return

    def serialized(self: BotocoreStubber, *args: Any, **kwargs: Any) -> Any:
        with _LOCK:
            return current(self, *args, **kwargs)

    setattr(serialized, _MARK, True)
    BotocoreStubber.__call__ = serialized  # type: ignore[method-assign]


install()
