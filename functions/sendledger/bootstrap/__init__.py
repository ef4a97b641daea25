"""Composition root: the one place adapters are built, once per warm container.

Each handler takes an optional ``runtime``; without one it uses :func:`runtime`, built on the
first invocation. Tests and the local stack pass their own (moto, a fake clock, fakes).
Adapter modules are imported inside the builders, so boto3 and botocore load on the
first invocation rather than with every handler module (the cold-start bar).

- ``runtime.py``: ``Runtime``, a container's parts and the flows built from them;
- ``slices.py``: the provider slices, loaded by name here alone, and what is built from them;
- ``status_out.py``: the publisher's and the callbacks' parts;
- ``lazy.py``: ``on_first_use``, the one lazy mechanism.
"""

from sendledger.bootstrap.lazy import on_first_use
from sendledger.bootstrap.runtime import Runtime, build_runtime, runtime
from sendledger.bootstrap.slices import (
    LaneBuilder,
    build_caller_admin,
    build_webhook,
    email_sender,
    escalation_queue,
    feature_flags,
    other_email_senders,
    provider_lanes,
    simulated_carriers,
    simulations,
    slice_of,
    sms_sender,
    webhook,
)
from sendledger.bootstrap.status_out import StatusOut, build_status_out, status_out

__all__ = [
    "LaneBuilder",
    "Runtime",
    "StatusOut",
    "build_caller_admin",
    "build_runtime",
    "build_status_out",
    "build_webhook",
    "email_sender",
    "escalation_queue",
    "feature_flags",
    "on_first_use",
    "other_email_senders",
    "provider_lanes",
    "runtime",
    "simulated_carriers",
    "simulations",
    "slice_of",
    "sms_sender",
    "status_out",
    "webhook",
]
