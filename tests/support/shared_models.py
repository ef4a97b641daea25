"""One botocore loader for every session a test run makes.

moto renews boto3's default session with every mock (for its fake credentials), and each new
botocore session would read and parse the service models' JSON files again: tens of ms per
client, several clients per test. The sessions share one loader instead; its cache holds the
models as read from botocore's data files, which botocore already hands every client of a
session (no client changes them).
"""

from __future__ import annotations

import botocore.loaders
import botocore.session

_LOADER = botocore.loaders.create_loader()


def _shared_data_loader(self: botocore.session.Session) -> None:
    self._components.lazy_register_component("data_loader", lambda: _LOADER)


def install() -> None:
    botocore.session.Session._register_data_loader = _shared_data_loader  # type: ignore[method-assign]
