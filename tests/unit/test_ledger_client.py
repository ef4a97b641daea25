"""The ledger table's client is made once per container, however many threads ask for it first."""

import threading
from concurrent.futures import ThreadPoolExecutor

from sendledger.adapters.dynamodb import table as table_module
from sendledger.adapters.dynamodb.table import Table

THREADS = 8  # the poller's first events are applied in parallel (POLL_APPLY_CONCURRENCY)


def test_threads_asking_at_once_share_one_client(monkeypatch):
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

    monkeypatch.setattr(table_module, "ledger_client", make_client)
    table = Table("ledger")

    def first_request(_: int) -> object:
        all_asked.wait()
        return table.client

    with ThreadPoolExecutor(THREADS) as pool:
        clients = list(pool.map(first_request, range(THREADS)))
    assert len(made) == 1 and all(client is made[0] for client in clients)
