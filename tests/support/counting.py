"""Counts the DynamoDB requests of *every* botocore client in the process (the request budget).

A counter hooked on the ledger's own clients misses a read made through any other client (a
stray ``boto3.client("dynamodb").get_item(...)`` on the send path would not be counted). So the
hook sits where every client is born: importing this module wraps
``botocore.session.Session.create_client`` once, and every DynamoDB client created from then on
gets dispatching handlers on its own event emitter. boto3 (default and explicit sessions), the
product's cached clients (``sendledger.adapters.aws.client``) and the ledger's own client all
create clients through that method.
Clients already alive when this module is imported are found by walking the garbage collector's
objects and get the same handlers. Registration uses fixed unique ids, so a client never counts
a request twice however often it is seen.

tests/conftest.py imports this module before anything else can create a client; the benchmark
(benchmarks/counting.py) observes requests through the same hook.

The handlers do nothing unless an observer is active: ``count_dynamodb_requests()`` for a plain
count per operation, or any :class:`Observer` passed to :func:`observing`. Observers see the
requests of every thread (the poller applies events concurrently), not only the caller's.
"""

from __future__ import annotations

import gc
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import botocore.session
from botocore.client import BaseClient

SERVICE = "dynamodb"
UNIQUE_ID = "sendledger-dynamodb-request-observer"
_MARK = "_sendledger_request_observer"


class Observer:
    """Receives the botocore events of every DynamoDB request while it is active (no-ops here).

    Handlers get botocore's keyword arguments (``model``, ``params``, ``context``,
    ``http_response``, ``parsed``, ...) and must return None: a value returned from
    ``before-call`` would replace the request's answer.
    """

    def before_parameter_build(self, **kwargs: Any) -> None:
        """The API parameters as the caller passed them (``params``), before serialisation."""

    def before_call(self, **kwargs: Any) -> None:
        """Once per request attempt that is about to be sent (``model`` is the operation)."""

    def after_call(self, **kwargs: Any) -> None:
        """The parsed answer (``http_response``, ``parsed``) of a request."""


ObserverT = TypeVar("ObserverT", bound=Observer)

_observers: list[Observer] = []
_observers_lock = threading.Lock()


def _dispatcher(method: str) -> Callable[..., None]:
    def dispatch(**kwargs: Any) -> None:
        for observer in tuple(_observers):
            getattr(observer, method)(**kwargs)

    dispatch.__name__ = f"dispatch_{method}"
    return dispatch


_HANDLERS = (
    (f"before-parameter-build.{SERVICE}", _dispatcher("before_parameter_build")),
    (f"before-call.{SERVICE}", _dispatcher("before_call")),
    (f"after-call.{SERVICE}", _dispatcher("after_call")),
)


def watch(client: Any) -> None:
    """Hook one client (only DynamoDB clients; any other is left alone). Idempotent."""
    meta = getattr(client, "meta", None)
    if meta is None or meta.service_model.service_name != SERVICE:
        return
    watch_emitter(meta.events)


def watch_emitter(emitter: Any) -> None:
    """Hook one DynamoDB client's event emitter. Idempotent (fixed unique ids)."""
    for event, handler in _HANDLERS:
        emitter.register(event, handler, unique_id=f"{UNIQUE_ID}:{event}")


def ledger_emitters(store: Any) -> list[Any]:
    """The botocore event emitter of the one client the ledger's stores share (any store's table's).

    For fault hooks that must sit on exactly the product's clients (not on a test's own scans).
    """
    return [store.table.client.meta.events]


def _live_clients() -> list[BaseClient]:
    found = []
    for candidate in gc.get_objects():
        try:
            if isinstance(candidate, BaseClient):
                found.append(candidate)
        except Exception:  # a proxy whose __class__ raises is no client of ours
            continue
    return found


def install() -> None:
    """Hook every DynamoDB client, existing or future (idempotent; runs at import)."""
    current = botocore.session.Session.create_client
    if not getattr(current, _MARK, False):

        def create_client(self: Any, *args: Any, **kwargs: Any) -> Any:
            client = current(self, *args, **kwargs)
            watch(client)
            return client

        create_client.__doc__ = current.__doc__
        setattr(create_client, _MARK, True)
        botocore.session.Session.create_client = create_client
    for client in _live_clients():
        watch(client)


@contextmanager
def observing(observer: ObserverT) -> Iterator[ObserverT]:
    """Make `observer` receive every DynamoDB request made inside the block, by any client."""
    with _observers_lock:
        _observers.append(observer)
    try:
        yield observer
    finally:
        with _observers_lock:
            # By identity: two observers may compare equal (two empty logs, say).
            index = next(i for i, active in enumerate(_observers) if active is observer)
            del _observers[index]


class RequestCounter(Observer):
    """Requests per DynamoDB operation: one per API call (botocore's own retries of a call are inside it)."""

    def __init__(self) -> None:
        self.operations: Counter[str] = Counter()
        self._lock = threading.Lock()

    def before_call(self, **kwargs: Any) -> None:
        with self._lock:
            self.operations[kwargs["model"].name] += 1

    @property
    def total(self) -> int:
        return sum(self.operations.values())

    def reset(self) -> None:
        with self._lock:
            self.operations.clear()


@contextmanager
def count_dynamodb_requests() -> Iterator[RequestCounter]:
    """Count the DynamoDB requests made inside the block, through any client of the process."""
    with observing(RequestCounter()) as counter:
        yield counter


install()
