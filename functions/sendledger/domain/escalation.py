"""A message's escalation: who is told next, and when, if it is not delivered.

One value from the request to the ledger and back: the api builds it from the validated request,
the send path checks its fallbacks, the ledger stores it as JSON (`as_json`, the form the
idempotency fingerprint of a keyed send was always computed over), and the poller escalates along
it, one step at a time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sendledger.domain.recipients import Channel
from sendledger.domain.values import value


@value
class Fallback:
    channel: Channel
    to: str


@value
class Escalation:
    deadline_seconds: int  # after the message's creation (a fallback's: after its own send)
    fallback: tuple[Fallback, ...]  # the recipients still to try, in order
    step: int = 0  # how many fallbacks were sent before this message (0: the caller's own)

    def next_step(self) -> tuple[Fallback, Escalation | None] | None:
        """The fallback to send now, and the escalation it carries on (None: it is the last)."""
        if not self.fallback:
            return None
        first, rest = self.fallback[0], self.fallback[1:]
        return first, Escalation(self.deadline_seconds, rest, self.step + 1) if rest else None

    def as_json(self) -> dict[str, Any]:
        shape: dict[str, Any] = {
            "deadline_seconds": self.deadline_seconds,
            "fallback": [{"channel": f.channel.value, "to": f.to} for f in self.fallback],
        }
        if self.step:
            shape["step"] = self.step
        return shape

    @classmethod
    def from_json(cls, shape: Mapping[str, Any]) -> Escalation:
        return cls(
            deadline_seconds=int(shape["deadline_seconds"]),
            fallback=tuple(Fallback(Channel(f["channel"]), str(f["to"])) for f in shape.get("fallback") or ()),
            step=int(shape.get("step", 0)),
        )
