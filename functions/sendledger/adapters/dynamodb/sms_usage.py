"""SMS segments per caller and UTC day: `CALLER#<caller id>` / `SMSDAY#<YYYY-MM-DD>`, `segments`
(ADD), expiring a few days after its day. Written by the publisher once per caller and day per
stream batch, never by a send; read by the send path of a capped caller (usecases/sms_guard.py
caches it)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from sendledger import names
from sendledger.adapters.dynamodb.expressions import Update, decode
from sendledger.adapters.dynamodb.keys import caller_pk, sms_day_sk
from sendledger.adapters.dynamodb.table import Table
from sendledger.domain.callers import CallerId

SEGMENTS = "segments"
KEPT_FOR = timedelta(days=3)  # the console shows today's; yesterday's helps an investigation


class DynamoSmsUsage:
    def __init__(self, table: Table) -> None:
        self.table = table

    def segments_on(self, caller_id: CallerId, day: str) -> int:
        item = self.table.get(caller_pk(caller_id), sms_day_sk(day))
        return int(decode(item[SEGMENTS])) if item and SEGMENTS in item else 0

    def add(self, counted: Mapping[tuple[CallerId, str], int]) -> None:
        for (caller_id, day), segments in counted.items():
            expires = datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC) + KEPT_FOR
            update = Update().add(SEGMENTS, segments).set(names.TABLE_TTL_ATTRIBUTE, int(expires.timestamp()))
            self.table.update(caller_pk(caller_id), sms_day_sk(day), update)
