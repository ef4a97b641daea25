"""A lazily made client (the ledger table's, a queue's, the SMS log reader's) is made once per
container, however many threads ask for it first."""

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from sendledger.adapters import sdk, sqs
from sendledger.adapters.dynamodb import table as table_module
from sendledger.adapters.dynamodb.table import Table
from sendledger.adapters.sqs import SqsEscalationQueue, SqsEventQueue
from sendledger.providers.sns.logs import CloudWatchLogReader

THREADS = 8  # the poller's first events are applied in parallel (POLL_APPLY_CONCURRENCY)


def _table(monkeypatch: pytest.MonkeyPatch, make: Callable[[], object]) -> Any:
    monkeypatch.setattr(table_module, "ledger_client", make)
    return Table("ledger")


def _events_queue(monkeypatch: pytest.MonkeyPatch, make: Callable[[], object]) -> Any:
    monkeypatch.setattr(sqs, "sqs_client", make)
    return SqsEventQueue("https://sqs.us-east-1.amazonaws.com/1/events")


def _escalation_queue(monkeypatch: pytest.MonkeyPatch, make: Callable[[], object]) -> Any:
    monkeypatch.setattr(sqs, "sqs_client", make)
    return SqsEscalationQueue("https://sqs.us-east-1.amazonaws.com/1/escalations")


def _log_reader(monkeypatch: pytest.MonkeyPatch, make: Callable[[], object]) -> Any:
    monkeypatch.setattr(sdk, "client", lambda service, config: make())
    return CloudWatchLogReader()


@pytest.mark.parametrize(
    "owner", [_table, _events_queue, _escalation_queue, _log_reader], ids=lambda owner: owner.__name__.strip("_")
)
def test_threads_asking_at_once_share_one_client(monkeypatch: pytest.MonkeyPatch, owner: Callable[..., Any]) -> None:
    made: list[object] = []
    all_asked = threading.Barrier(THREADS, timeout=10)
    others_inside = threading.Condition()

    def make_client() -> object:
        with others_inside:
            made.append(object())
            # Give every other thread the time to reach the factory too (it can, without the lock).
            others_inside.wait_for(lambda: len(made) == THREADS, timeout=0.3)
            others_inside.notify_all()
        return made[-1]

    adapter = owner(monkeypatch, make_client)

    def first_request(_: int) -> object:
        all_asked.wait()
        return adapter.client

    with ThreadPoolExecutor(THREADS) as pool:
        clients = list(pool.map(first_request, range(THREADS)))
    assert len(made) == 1 and all(client is made[0] for client in clients)


def test_a_client_given_is_used_and_none_is_made() -> None:
    given = object()
    lazy = sdk.LazyClient(lambda: pytest.fail("a client was made"), given)
    assert lazy.get() is given
