"""A send's walk and a poll cycle's walk through sendledger's modules, on in-process moto.

Run: ``.venv/bin/python scripts/walks.py [--modules]``

A `sys.setprofile` tracer follows one warm request through its Lambda handler: a POST
/v1/messages (intent, SES SendEmail through the simulator, outcome), then one scheduled poll cycle
that applies the SES events of that send (the SES queue lane, the SMS log lane, due work,
escalation, metrics). The walk starts where the handler hands over to the flow (the send's
`send_message`/`MessageSender.send`, the cycle's `poll_cycle`/`PollCycle.run`).

What counts, as a reader of the code would meet it:
- a **unit** is a module of the flow layers (handlers, bootstrap, api, usecases, providers), or
  the adapter module a port call enters (the store's own helpers are inside that one stop); the
  vocabulary (domain, ports, settings, names) is read in place and is no stop, and what runs on
  the far side of an SDK call (the simulated provider) is not the flow's walk;
- a **stop** is a call from one unit into another, once per call path (a loop's second turn,
  a second page, is read already); calls within a unit, and calls into a unit already on the
  call stack (a callback such as ``seconds_left``), are none;
- a **return** is a stop into a flow unit the walk already reached from elsewhere: the reader
  opens a file already read, from another place. A store (an adapter behind a port) reached
  from two steps is listed apart: the port is read once, two steps use it.

Each flow runs once unmeasured first: the first request builds the container's adapters (the
composition root's work, not the flow's). Work a pool thread does (concurrent applies) is not
followed: the tracer watches the calling thread.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "sendledger")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "sendledger")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "CRITICAL")
os.environ.pop("AWS_ENDPOINT_URL", None)

ROOT = Path(__file__).resolve().parents[1]
FLOW_LAYERS = ("handlers", "bootstrap", "api", "usecases", "providers")
REMOTE = ("botocore.", "local.", "moto.", "urllib3.")
# Where the handler hands over to the flow (the names before and after the per-flow dependencies).
ENTRIES = frozenset(
    {
        ("sendledger.usecases.send", "send_message"),
        ("sendledger.usecases.send", "send"),
        ("sendledger.usecases.poll", "poll_cycle"),
        ("sendledger.usecases.poll", "run"),
    }
)


def unit_of(module: str) -> str | None:
    """The walk's unit of a module (None: not sendledger's, or vocabulary read in place)."""
    parts = module.split(".")
    if parts[0] != "sendledger" or len(parts) < 2:
        return None
    if parts[1] in FLOW_LAYERS:
        return module.removeprefix("sendledger.")
    if parts[1] == "adapters":
        return module.removeprefix("sendledger.")
    return None


@dataclass
class Walk:
    stops: list[tuple[str, ...]] = field(default_factory=list)  # each: the units from the entry down
    returns: list[str] = field(default_factory=list)  # flow units reached again from elsewhere
    shared_stores: list[str] = field(default_factory=list)  # adapters reached from more than one step

    def called(self, stack: list[str]) -> None:
        """`stack`: the units of the frames from the flow's entry to the frame just called."""
        callee, below = stack[-1], stack[:-1]
        if not below or callee in below:
            return  # the entry, a helper of the same unit, or a callback up the stack
        stop = tuple(stack)
        if stop in self.stops:
            return  # the same call again (a loop, a second page): the reader has read it
        if any(seen[-1] == callee for seen in self.stops):
            # Reached before from elsewhere: a flow module is read again from here; a store is
            # one port read once, used by two steps (counted apart).
            (self.shared_stores if callee.startswith("adapters.") else self.returns).append(callee)
        self.stops.append(stop)

    def summary(self, modules: bool) -> dict[str, Any]:
        found: dict[str, Any] = {
            "stops": len(self.stops),
            "returns": len(self.returns),
            "stores_shared_by_steps": sorted(set(self.shared_stores)),
        }
        if modules:
            found["walk"] = ["  " * len(stop) + stop[-1] for stop in self.stops]
            found["returned_to"] = sorted(set(self.returns))
        return found


def _units(frame: FrameType | None) -> list[str] | None:
    """The units from the flow's entry down to `frame` (None: the frame is not the flow's own)."""
    frames = []
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    frames.reverse()
    names = [(f.f_globals.get("__name__", ""), f.f_code.co_name) for f in frames]
    start = next((i for i, name in enumerate(names) if name in ENTRIES), None)
    if start is None:
        return None
    units: list[str] = []
    for module, _ in names[start:]:
        if module.startswith(REMOTE):
            return None  # the far side of an SDK call (the simulated provider): not the flow's walk
        unit = unit_of(module)
        if unit is None or (units and units[-1] == unit):
            continue
        if units and units[-1].startswith("adapters.") and unit.startswith("adapters."):
            continue  # inside a store: its own modules are the adapter's business, one stop
        units.append(unit)
    return units


@contextmanager
def walking() -> Iterator[Walk]:
    walk = Walk()

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event != "call" or unit_of(frame.f_globals.get("__name__", "")) is None:
            return
        units = _units(frame)
        if units and not units[-1].startswith("handlers."):  # the handler's callbacks are up the stack
            walk.called(units)

    sys.setprofile(profile)
    try:
        yield walk
    finally:
        sys.setprofile(None)


def measure() -> dict[str, Walk]:
    """The walk of a warm send and of the poll cycle that applies its events."""
    from tests.support.walks import flows

    with flows() as (send, deliver_events, poll):
        send(), deliver_events(), poll()  # warm: the first request builds the container's adapters
        walks: dict[str, Walk] = {}
        with walking() as walks["send"]:
            send()
        deliver_events()  # the simulated provider's events for that send reach their queue
        with walking() as walks["poll"]:
            poll()
    return walks


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--modules", action="store_true", help="print each walk's stops")
    args = parser.parse_args()
    sys.path[:0] = [str(ROOT / "functions"), str(ROOT)]
    print(json.dumps({name: walk.summary(args.modules) for name, walk in measure().items()}, indent=2))


if __name__ == "__main__":
    main()
