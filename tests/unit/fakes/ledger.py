"""The in-memory ledger's stores, one per aggregate, over one LedgerState (as LedgerTable over one table)."""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.unit.fakes.caller_settings import FakeCallerSettings
from tests.unit.fakes.due_work import FakeDueWork
from tests.unit.fakes.escalations import FakeEscalationTimers
from tests.unit.fakes.events import FakeDeliveryEvents
from tests.unit.fakes.messages import FakeMessages
from tests.unit.fakes.poller_state import FakePollerState
from tests.unit.fakes.receipts import FakeSmsReceipts
from tests.unit.fakes.recipients import FakeRecipients
from tests.unit.fakes.resets import FakeResets
from tests.unit.fakes.state import LedgerState


@dataclass
class FakeLedger:
    db: LedgerState = field(default_factory=LedgerState)

    def __post_init__(self) -> None:
        self.messages = FakeMessages(self.db)
        self.recipients = FakeRecipients(self.db)
        self.resets = FakeResets(self.db)
        self.poller_state = FakePollerState(self.db)
        self.events = FakeDeliveryEvents(self.db)
        self.sms_receipts = FakeSmsReceipts(self.db)  # the publisher's, from the stream
        self.due_work = FakeDueWork(self.db)
        self.escalation_timers = FakeEscalationTimers(self.db)
        self.caller_settings = FakeCallerSettings(self.db)
