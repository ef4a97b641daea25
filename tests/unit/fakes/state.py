"""The ledger in memory: one dict per item family of the DynamoDB table (adapters/dynamodb/keys.py).

Every store of a FakeLedger works on the same LedgerState, as every DynamoDB store works on the
same table. A write that is one request (a conditional write or a transaction) checks all its
conditions before it changes anything, under the one lock: all of it lands, or none of it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from sendledger.domain.caller_settings import CallerSettings
from sendledger.ports.resets import ResetRecord

if TYPE_CHECKING:
    from tests.unit.fakes.escalations import Timer
    from tests.unit.fakes.messages import MessageItem
    from tests.unit.fakes.receipts import Receipt, ReceiptKey
    from tests.unit.fakes.recipients import RecipientItem


@dataclass
class LedgerState:
    messages: dict[str, MessageItem] = field(default_factory=dict)  # MSG#<id> / MSG
    recipients: dict[str, RecipientItem] = field(default_factory=dict)  # SUP#<key> / STATE
    resets: dict[str, ResetRecord] = field(default_factory=dict)  # RESET#<owner>#<account> / ACTIVE
    receipts: dict[ReceiptKey, Receipt] = field(default_factory=dict)  # MSG#<id> / RCPT, PMID#<id> / PMID
    timers: dict[str, Timer] = field(default_factory=dict)  # MSG#<id> / ESC
    unmatched_events: dict[str, datetime] = field(default_factory=dict)  # EVT#<source>#<id> / EVT
    watermarks: dict[str, datetime] = field(default_factory=dict)  # WM#<source> / WM
    cursors: dict[str, str] = field(default_factory=dict)
    callers: dict[str, CallerSettings] = field(default_factory=dict)  # CALLER#<caller id> / SETTINGS
    lock: threading.RLock = field(default_factory=threading.RLock)
