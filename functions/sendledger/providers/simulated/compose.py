"""Test mode's carriers, composed over this deployment's own event paths: the queues and log
groups where each provider's real events arrive (outlets.py). Built by bootstrap on first use."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from sendledger.domain.clock import Clock, SystemClock
from sendledger.providers.mailgun.settings import MailgunSettings
from sendledger.providers.sendgrid.settings import SendGridSettings
from sendledger.providers.ses.settings import SesSettings
from sendledger.providers.simulated.outlets import AwsOutlet, queue_account
from sendledger.providers.simulated.sender import SimulatedCarriers
from sendledger.providers.sns.settings import SnsSettings

if TYPE_CHECKING:
    from sendledger.settings import Settings


def carriers_for(settings: Settings, clock: Clock | None = None) -> SimulatedCarriers:
    """Test mode's carriers, putting their events where the SES, SNS, SendGrid and Mailgun events of
    this deployment arrive (providers/simulated/outlets.py)."""
    ses, sns = settings.provider(SesSettings), settings.provider(SnsSettings)
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    outlet = AwsOutlet(
        region=region,
        ses_queue_url=ses.events_queue_url,
        success_log_group=sns.success_log_group,
        failure_log_group=sns.failure_log_group,
        sendgrid_queue_url=settings.provider(SendGridSettings).events_queue_url,
        mailgun_queue_url=settings.provider(MailgunSettings).events_queue_url,
    )
    return SimulatedCarriers(
        outlet=outlet,
        clock=clock or SystemClock(),
        sender_email=settings.sender_email,
        configuration_set=ses.configuration_set,
        region=region,
        account_id=queue_account(ses.events_queue_url),
    )
