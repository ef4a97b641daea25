"""Simulated providers: the outcome rules of the local stack's simulators, as product code.

A caller in test mode (its settings, domain/caller_settings.py) is never carried by a real
provider: its sends go to sender.py's simulated senders, which answer as the rules say
(rules.py) and put the provider's own events (events.py) where the deployment's ingestion
already reads that provider's events: SES records, in SNS's envelope, on the SES events queue;
SNS SMS status records in the delivery-status log groups; SendGrid's and Mailgun's events on their
webhook events queues, as the verified intake queues them (outlets.py). The message keeps its
carrier's name; its events carry a simulated provider message id that names the test caller
(domain/test_mode.py), so ingestion keeps its suppressions apart from real recipients'.

Not a registry provider (no one picks it): the folder has no `SLICE`. Pure at import.
"""
