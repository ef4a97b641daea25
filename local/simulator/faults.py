"""Fault labels: the end of a recipient's local part picks a transport fault.

* ``+timeout-lost``: the first send times out before the provider accepts anything.
* ``+throttle``: the first :data:`THROTTLED_CALLS` sends get SES's HTTP 429.
* ``+timeout-accepted``: the provider accepts every send, the caller sees a read timeout.

Calls are counted per (label, address), so a retry of the same send eventually succeeds.
"""

from __future__ import annotations

import threading

LABEL_TIMEOUT_ACCEPTED = "timeout-accepted"
LABEL_TIMEOUT_LOST = "timeout-lost"
LABEL_THROTTLE = "throttle"
LABELS = (LABEL_TIMEOUT_ACCEPTED, LABEL_TIMEOUT_LOST, LABEL_THROTTLE)
THROTTLED_CALLS = 2


def fault_label(address: str) -> str | None:
    """The fault label at the end of an address's local part (``alice+throttle@x`` → throttle)."""
    local = address.rsplit("@", 1)[0].lower()
    for label in LABELS:
        if local.endswith("+" + label):
            return label
    return None


class FaultCounter:
    """Decides, call by call, which label faults apply before the provider accepts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: dict[str, int] = {}

    def before_acceptance(self, address: str) -> str | None:
        """``timeout-lost`` or ``throttle`` when this call must not reach the provider, else None."""
        label = fault_label(address)
        if label == LABEL_TIMEOUT_LOST and self._count(address, label) == 1:
            return label
        if label == LABEL_THROTTLE and self._count(address, label) <= THROTTLED_CALLS:
            return label
        return None

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
