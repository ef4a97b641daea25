"""Fixtures for the local stack's tests (helpers live in local_support.py)."""

from tests.local.local_support import aws, clock, resources, simulator

__all__ = ["aws", "clock", "resources", "simulator"]
