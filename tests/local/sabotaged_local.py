"""`python -m local` with one invariant broken on purpose: a retry that skips the lookup.

A timed-out reset mail is sent again as soon as its unknown marker comes due, with a fresh
token, without asking the provider, without the watermark and past the store's guards: the
blind retry the conformance run must catch (tests/local/test_conformance_local.py).
"""

from __future__ import annotations

import runpy
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def install() -> None:
    from sendledger.domain import tokens
    from sendledger.domain.callers import CallerId
    from sendledger.domain.messages import HistoryEntry, HistoryType, MessageState
    from sendledger.ports.messages import Expectations, SendIntent
    from sendledger.usecases import resets
    from sendledger.usecases.resolve_unknown import UnknownResolver

    checked = UnknownResolver.resolve  # patched on the class the due-work pass calls

    def blind_retry(self: UnknownResolver, message_id: str, seconds_left: Any, report: Any) -> None:
        message = self.messages.get(message_id)
        if message is None or message.reset_account_id is None:
            checked(self, message_id, seconds_left, report)
            return
        now = self.clock.now()
        # The version the reset recorded, as the resender's own mailer renders it.
        version = self.resender.catalog.recorded(CallerId(message.owner or ""), message.template)
        content = resets._content(version, message.template.locale, self.settings, tokens.mint_token())
        entry = HistoryEntry(at=now, type=HistoryType.RESEND, state=MessageState.SENDING, evidence={"blind": True})
        intent = SendIntent(message, entry, now + timedelta(seconds=60), Expectations())
        resender = self.resender
        resender.outcomes.record(intent, resender.delivery.deliver(message, seconds_left, content))
        report.bump("blind_retry")

    UnknownResolver.resolve = blind_retry  # type: ignore[method-assign]


if __name__ == "__main__":
    sys.path[:0] = [str(ROOT / "functions"), str(ROOT)]
    install()
    runpy.run_module("local", run_name="__main__", alter_sys=True)
