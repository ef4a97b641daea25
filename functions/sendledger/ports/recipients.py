"""Recipients: suppression state, the last-send marker and transient bounces."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from sendledger.domain.eligibility import SuppressionState
from sendledger.domain.values import value


@value
class RecipientState:
    suppression: SuppressionState
    last_send_at: datetime | None
    last_message_id: str | None = None
    transient_times: list[datetime] = field(default_factory=list)
    transient_revision: int = 0


@dataclass
class SuppressionView:
    state: SuppressionState
    history: list[dict[str, Any]] = field(default_factory=list)


class RecipientStore(Protocol):
    """Recipients: suppression state (versioned), the last-send marker, transient bounces."""

    def get(self, recipient_key: str) -> RecipientState: ...

    def view(self, recipient_key: str) -> SuppressionView: ...

    def change(
        self, recipient_key: str, suppressed: bool, reason: str, actor: str, expected_version: int, now: datetime
    ) -> SuppressionState: ...

    def record_unchanged(
        self, recipient_key: str, suppressed: bool, reason: str, actor: str, version: int, now: datetime
    ) -> None:
        """Audit an admin act that changes nothing (a repeated suppress or re-enable)."""
