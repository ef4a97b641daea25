"""A send and a poll cycle stay readable: each walk stops at few modules and never goes back to
one it left (scripts/walks.py measures them; docs/design.md says what counts)."""

import importlib.util
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "walks.py"
MAX_STOPS = 20


def _walks():
    spec = importlib.util.spec_from_file_location("walks_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module.measure()


def test_a_send_and_a_poll_cycle_each_walk_at_most_twenty_modules_without_going_back():
    walks = _walks()
    for name in ("send", "poll"):
        walk = walks[name].summary(modules=True)
        assert walk["stops"] <= MAX_STOPS, (name, walk["walk"])
        assert walk["returns"] == 0, (name, walk["returned_to"], walk["walk"])
    # The walks reach the provider and the ledger (the measure follows the real flow, not a stub)
    assert any("providers.ses.sender" in stop for stop in walks["send"].summary(modules=True)["walk"])
    assert any("adapters.dynamodb.messages" in stop for stop in walks["send"].summary(modules=True)["walk"])
    assert any("providers.ses.events" in stop for stop in walks["poll"].summary(modules=True)["walk"])
