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
    from sendledger.usecases import due_work, resets
    from sendledger.usecases.delivery import deliver, record_provider_outcome
    from sendledger.usecases.template_catalog import SHIPPED

    checked = due_work.resolve_unknown  # patched where the due-work pass looks it up

    def blind_retry(pipeline: Any, message_id: str, seconds_left: Any, report: Any, catalog: Any = SHIPPED) -> None:
        services = pipeline.services
        message = services.messages.get(message_id)
        if message is None or message.reset_account_id is None:
            checked(pipeline, message_id, seconds_left, report, catalog)
            return
        now = services.clock.now()
        version = catalog.recorded(CallerId(message.owner or ""), message.template)
        content = resets._content(version, message.template.locale, services.settings, tokens.mint_token())
        entry = HistoryEntry(at=now, type=HistoryType.RESEND, state=MessageState.SENDING, evidence={"blind": True})
        intent = SendIntent(message, entry, now + timedelta(seconds=60), Expectations())
        record_provider_outcome(services, intent, deliver(services, message, seconds_left, content))
        report.bump("blind_retry")

    due_work.resolve_unknown = blind_retry


if __name__ == "__main__":
    sys.path[:0] = [str(ROOT / "functions"), str(ROOT)]
    install()
    runpy.run_module("local", run_name="__main__", alter_sys=True)
