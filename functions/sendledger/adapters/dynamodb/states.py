"""Writing a message's (or an SMS receipt's) state and its place in the due-work index."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sendledger import names
from sendledger.adapters.dynamodb.expressions import Update
from sendledger.adapters.dynamodb.keys import due_shard
from sendledger.domain.messages import DueKind, MessageState

STATE = "state"
DUE_KIND, DUE_AT = names.DUE_WORK_INDEX_PARTITION_KEY, names.DUE_WORK_INDEX_SORT_KEY


def set_due(update: Update, message_id: str, due: tuple[DueKind, datetime] | None) -> Update:
    if due is None:
        return update.remove(DUE_KIND, DUE_AT)
    return update.set(DUE_KIND, due_shard(due[0].value, message_id)).set(DUE_AT, int(due[1].timestamp()))


def state_in(update: Update, allowed: Iterable[MessageState]) -> Update:
    return update.when(update.one_of(STATE, [state.value for state in allowed]))
