"""A password reset's evidence, read from its mail's history and the account's reset record.

The account's record holds only its latest reset; everything a reviewer needs about an earlier
one (its tokens, why each stopped being valid) is in the history of the reset's mail, which is
never overwritten. Never a token nor a token hash.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sendledger.domain.clock import parse_iso
from sendledger.domain.messages import HistoryType, Message
from sendledger.domain.values import value


class ResetState(StrEnum):
    ACTIVE = "active"
    CONSUMED = "consumed"
    EXPIRED = "expired"
    REPLACED = "replaced"
    LOCKED = "locked"


class Invalidation(StrEnum):
    RESENT = "superseded by a new token (the previous mail was proven not accepted)"
    CONSUMED = "consumed"
    EXPIRED = "expired"
    REPLACED = "reset replaced by a request with a different email"
    LOCKED = "locked after too many wrong tokens"


@value
class TokenVersion:
    version: int
    minted_at: datetime
    invalidated_at: datetime | None
    invalidated_because: Invalidation | None


@value
class ResetEvidence:
    reset_id: str
    account_id: str
    state: ResetState
    created_at: datetime
    expires_at: datetime
    token_versions: list[TokenVersion]
    replaces: str | None  # the reset this one replaced, if any
    replaced_by: str | None
    message: Message


@value
class CurrentRecord:
    """What the account's record says, when it is still this reset's."""

    state: str  # active | consumed | invalidated
    expires_at: datetime


_ENDINGS = {
    HistoryType.RESET_CONSUMED: (ResetState.CONSUMED, Invalidation.CONSUMED),
    HistoryType.RESET_LOCKED: (ResetState.LOCKED, Invalidation.LOCKED),
    HistoryType.RESET_REPLACED: (ResetState.REPLACED, Invalidation.REPLACED),
}
_RECORD_STATES = {"consumed": ResetState.CONSUMED, "invalidated": ResetState.LOCKED}


def evidence_of(reset_id: str, message: Message, current: CurrentRecord | None, now: datetime) -> ResetEvidence:
    """`current`: the account's record if it still is this reset's (None: a later reset took its place)."""
    requested = next(e for e in message.history if e.type is HistoryType.RESET_REQUESTED)
    expires_at = parse_iso(str(requested.evidence["expires_at"]))
    minted = [e for e in message.history if e.type is HistoryType.RESET_MAIL]
    ending = next((e for e in message.history if e.type in _ENDINGS), None)
    if ending is not None:
        state, because = _ENDINGS[ending.type]
        ended_at: datetime | None = ending.at
    elif current is not None and current.state in _RECORD_STATES:
        # Ended by a write whose mail entry did not land (yet): the record says how.
        state = _RECORD_STATES[current.state]
        because = Invalidation.CONSUMED if state is ResetState.CONSUMED else Invalidation.LOCKED
        ended_at = None
    elif current is not None and current.expires_at > now:
        state, because, ended_at = ResetState.ACTIVE, None, None
    else:
        state, because, ended_at = ResetState.EXPIRED, Invalidation.EXPIRED, expires_at
    versions = []
    for index, entry in enumerate(minted):
        nxt = minted[index + 1] if index + 1 < len(minted) else None
        versions.append(
            TokenVersion(
                version=int(str(entry.evidence.get("attempt", index + 1))),
                minted_at=entry.at,
                invalidated_at=nxt.at if nxt else ended_at,
                invalidated_because=Invalidation.RESENT if nxt else because,
            )
        )
    return ResetEvidence(
        reset_id=reset_id,
        account_id=message.reset_account_id or "",
        state=state,
        created_at=requested.at,
        expires_at=expires_at,
        token_versions=versions,
        replaces=_text(requested.evidence.get("replaces")),
        replaced_by=_text(ending.evidence.get("replaced_by")) if ending is not None else None,
        message=message,
    )


def _text(value: object) -> str | None:
    return str(value) if value else None
