"""The SES mailbox simulator's addresses, which behave the same under every simulated provider.

``success@``, ``bounce@``, ``complaint@``, ``ooto@``, ``suppressionlist@simulator.amazonses.com``
(``+label`` allowed): each provider's simulator reports the outcome in its own event format and
by its own path; any other address is delivered.
"""

from __future__ import annotations

MAILBOX_SIMULATOR_DOMAIN = "simulator.amazonses.com"
MAILBOX_SIMULATOR_KINDS = frozenset({"success", "bounce", "complaint", "ooto", "suppressionlist"})


def mailbox_simulator_kind(address: str) -> str | None:
    """``bounce`` for ``bounce+x@simulator.amazonses.com``; None outside the mailbox simulator."""
    local, _, domain = address.rpartition("@")
    if domain.lower() != MAILBOX_SIMULATOR_DOMAIN:
        return None
    base = local.split("+", 1)[0].lower()
    return base if base in MAILBOX_SIMULATOR_KINDS else None
