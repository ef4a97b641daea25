"""Fixtures for the local stack's tests (helpers live in local_support.py)."""

import pytest

from local.stack import local_admins
from sendledger.settings import Settings
from tests.local.local_support import aws, clock, resources, simulator

__all__ = ["aws", "clock", "resources", "settings", "simulator"]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The root fixture's, with the local stack's admins (its admin credential, the unsigned principal)."""
    return settings.replace({"admin_principals": local_admins({}).split()})
