"""Public JSON views of ledger records (never tokens, never internal keys)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sendledger.domain.clock import iso
from sendledger.domain.messages import HistoryType, Message, MessageState, sms_json, template_view
from sendledger.domain.reset_evidence import ResetEvidence

if TYPE_CHECKING:
    # pydantic loads with the composition root, not with every handler module.
    from sendledger.settings import Settings


PROVIDER_ACTS = frozenset({HistoryType.PROVIDER_OUTCOME, HistoryType.PROVIDER_LOOKUP, HistoryType.RESEND})


def retry_after(message: Message, settings: Settings) -> int | None:
    if message.state is MessageState.UNKNOWN:
        return max(settings.poll_interval_seconds, settings.unknown_grace_seconds)
    if message.state in (MessageState.PENDING, MessageState.SENDING, MessageState.RECEIVED, MessageState.RETRY):
        return max(1, settings.poll_interval_seconds)
    return None


def message_view(message: Message, settings: Settings, with_history: bool = False) -> dict[str, Any]:
    view: dict[str, Any] = {
        "message_id": message.message_id,
        "state": message.state.value,
        "channel": message.channel.value,
        "to": message.to,
        "template": template_view(message.template),
        "category": message.category,
        "provider": message.provider,
        "provider_message_id": message.provider_message_id,
        "reason": message.reason,
        "created_at": iso(message.created_at),
        "updated_at": iso(message.updated_at),
    }
    if message.sms is not None:
        view["sms"] = sms_json(message.sms)
    wait = retry_after(message, settings)
    if wait is not None:
        view["retry_after_seconds"] = wait
    # A test caller's message says so, and so does each of its entries, however it is read. Only
    # when true: a real message's view is unchanged.
    test = {"test": True} if message.test else {}
    view.update(test)
    if with_history:
        view["history"] = [
            {
                "at": iso(entry.at),
                "type": entry.type,
                "state": entry.state.value if entry.state else None,
                # What the provider answered or proved names it (a message keeps one provider).
                **({"provider": message.provider} if entry.type in PROVIDER_ACTS else {}),
                **entry.evidence,
                **test,
            }
            for entry in message.history
        ]
    return view


def reset_evidence_view(found: ResetEvidence, settings: Settings) -> dict[str, Any]:
    return {
        "reset_id": found.reset_id,
        "account_id": found.account_id,
        "state": found.state.value,
        "created_at": iso(found.created_at),
        "expires_at": iso(found.expires_at),
        "replaces": found.replaces,
        "replaced_by": found.replaced_by,
        "token_versions": [
            {
                "version": version.version,
                "minted_at": iso(version.minted_at),
                "invalidated_at": iso(version.invalidated_at) if version.invalidated_at else None,
                "invalidated_because": version.invalidated_because.value if version.invalidated_because else None,
            }
            for version in found.token_versions
        ],
        "messages": [message_view(found.message, settings, with_history=True)],
    }
