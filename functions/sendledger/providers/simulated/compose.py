"""Test mode's carriers, composed over test mode's own event path: the test outcomes queue the
poller drains (outlets.py, outcomes.py). Built by bootstrap on first use."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from sendledger.domain.clock import Clock, SystemClock
from sendledger.providers.ses.settings import SesSettings
from sendledger.providers.simulated.outlets import AwsOutlet, queue_account
from sendledger.providers.simulated.sender import SimulatedCarriers

if TYPE_CHECKING:
    from sendledger.settings import Settings


def carriers_for(settings: Settings, clock: Clock | None = None) -> SimulatedCarriers:
    """Test mode's carriers, putting the SES, SNS, SendGrid and Mailgun events they simulate on
    the test outcomes queue (providers/simulated/outlets.py), in each carrier's own shape."""
    ses = settings.provider(SesSettings)
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    return SimulatedCarriers(
        outlet=AwsOutlet(queue_url=settings.test_outcomes_queue_url),
        clock=clock or SystemClock(),
        sender_email=settings.sender_email,
        configuration_set=ses.configuration_set,
        region=region,
        account_id=queue_account(settings.test_outcomes_queue_url),
    )
