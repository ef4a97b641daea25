"""Fault labels: the end of a recipient's local part picks a transport fault.

The labels and which call they hit are the product's rules
(sendledger/providers/simulated/rules.py); this module counts the calls, per (label, address)
for the whole local stack, so a retry of the same send eventually succeeds.
"""

from __future__ import annotations

import threading

from sendledger.providers.simulated.rules import (
    LABEL_THROTTLE,
    LABEL_TIMEOUT_ACCEPTED,
    LABEL_TIMEOUT_LOST,
    LABELS,
    THROTTLED_CALLS,
    Fault,
    fault_before_acceptance,
    fault_label,
)

__all__ = [
    "LABELS",
    "LABEL_THROTTLE",
    "LABEL_TIMEOUT_ACCEPTED",
    "LABEL_TIMEOUT_LOST",
    "THROTTLED_CALLS",
    "FaultCounter",
    "fault_label",
    "masked",
]


class FaultCounter:
    """Decides, call by call, which label faults apply before the provider accepts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: dict[str, int] = {}

    def before_acceptance(self, address: str) -> Fault | None:
        """``timeout-lost`` or ``throttle`` when this call must not reach the provider, else None."""
        label = fault_label(address)
        if label is None:
            return None
        return fault_before_acceptance(label, self._count(address, label) - 1)

    def reset(self) -> None:
        with self._lock:
            self._calls.clear()

    def _count(self, address: str, label: str) -> int:
        with self._lock:
            key = f"{label}:{address.lower()}"
            self._calls[key] = self._calls.get(key, 0) + 1
            return self._calls[key]


def masked(address: str) -> str:
    """Addresses never reach logs, local ones included: keep the label that explains the fault."""
    local, _, domain = address.partition("@")
    label = local.partition("+")[2]
    return f"{local[:1]}***{'+' + label if label else ''}@{domain}"
