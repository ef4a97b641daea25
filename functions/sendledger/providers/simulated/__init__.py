"""Simulated providers: the outcome rules of the local stack's simulators, as product code.

A caller in test mode (its settings, domain/caller_settings.py) is never carried by a real
provider: its sends go to sender.py's simulated senders, which answer as the rules say
(rules.py). The message keeps its carrier's name, and the carrier's slice says what it would
report (its simulation, providers/<name>/simulation.py: the provider's own events, each as its
real path carries it); those go to test mode's own queue (outlets.py), which the poller drains
with each carrier's own parser (outcomes.py). The events carry a simulated provider message id
that names the test caller (domain/test_mode.py), so ingestion keeps its suppressions apart from
real recipients'. Nothing here names a provider.

Not a registry provider (no one picks it): the folder has no `SLICE`. Pure at import.
"""
