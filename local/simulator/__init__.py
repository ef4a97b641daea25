"""The local SES / SNS simulator: plays the providers at the transport edge.

The Lambda code calls the real APIs (``sesv2.SendEmail``, ``sns.Publish`` with a phone number)
through boto3 clients built from the default session. :meth:`Simulator.install` registers
botocore event handlers on that session, so every client created *after* it is observed,
without any change to the production adapters. By concern:

* :mod:`~local.simulator.hooks`: the botocore hooks and the wire plumbing (request bodies,
  answers that never reach moto).
* :mod:`sendledger.providers.simulated`: the outcome rules (mailbox simulator addresses, fictional
  ``+1NPA55501XX`` numbers, the ``+timeout-accepted``, ``+timeout-lost`` and ``+throttle``
  labels) and the SES and SNS records they produce, product code shared with a test caller's
  deployed sends: the simulators here import them, they own no copy.
* :mod:`~local.simulator.faults`: counts the label faults' calls per address.
* :mod:`~local.simulator.providers.ses`: SES event-publishing records, published through SNS to SQS.
* :mod:`~local.simulator.providers.sns`: SNS delivery-status records, written to CloudWatch Logs
  and delivered to the ``sms_delivery_logs`` handler.
* :mod:`~local.simulator.providers`: one module per provider slice (SES and SNS above, the
  others served over HTTP by :mod:`~local.simulator.http`, or in-process to tests).
* :mod:`~local.simulator.core`: :class:`Simulator`, which ties them together around one outbox.

Events are *deferred*: :meth:`Simulator.flush` emits what the providers queued. Works with
moto's in-process ``mock_aws`` (install after the mock has started: ``mock_aws`` replaces
``boto3.DEFAULT_SESSION``) and with a moto server (``AWS_ENDPOINT_URL``).
"""

from __future__ import annotations

from local.simulator.core import Simulator
from local.simulator.faults import (
    LABEL_THROTTLE,
    LABEL_TIMEOUT_ACCEPTED,
    LABEL_TIMEOUT_LOST,
    THROTTLED_CALLS,
    fault_label,
)
from local.simulator.providers.sns import decode_subscription_event
from sendledger.providers.simulated.rules import SMS_SUCCESS_RESPONSE, mailbox_simulator_kind, sms_outcome
from sendledger.providers.sns.events import encode_subscription_event

__all__ = [
    "LABEL_THROTTLE",
    "LABEL_TIMEOUT_ACCEPTED",
    "LABEL_TIMEOUT_LOST",
    "SMS_SUCCESS_RESPONSE",
    "THROTTLED_CALLS",
    "Simulator",
    "decode_subscription_event",
    "encode_subscription_event",
    "fault_label",
    "mailbox_simulator_kind",
    "sms_outcome",
]
