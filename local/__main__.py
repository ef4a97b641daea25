"""``python -m local``: the whole sendledger stack on a laptop.

Settings come from the environment: SENDLEDGER_PORT (8080), SENDLEDGER_MOTO_PORT (5000),
POLL_INTERVAL_SECONDS (5) and every handler setting the README lists.
"""

from __future__ import annotations

import sys
from pathlib import Path

_REPO = Path(__file__).resolve().parent.parent
for _path in (str(_REPO / "functions"), str(_REPO)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import logging  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import threading  # noqa: E402
from types import FrameType  # noqa: E402

from local.stack import (  # noqa: E402
    DEFAULT_MOTO_PORT,
    DEFAULT_PORT,
    ENV_HOST,
    ENV_MOTO_PORT,
    ENV_PORT,
    LocalStack,
)


def main() -> int:
    logging.basicConfig(
        level=os.environ.get("SENDLEDGER_LOCAL_LOG_LEVEL", "INFO"),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    stack = LocalStack(
        port=int(os.environ.get(ENV_PORT) or DEFAULT_PORT),
        moto_port=int(os.environ.get(ENV_MOTO_PORT) or DEFAULT_MOTO_PORT),
        host=os.environ.get(ENV_HOST) or "127.0.0.1",
    )
    stopping = threading.Event()

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        logging.getLogger("sendledger.local").info("signal %d: shutting down", signum)
        stopping.set()

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    try:
        stack.start()
    except Exception:
        logging.getLogger("sendledger.local").exception("the local stack could not start")
        stack.stop()
        return 1
    try:
        while not stopping.wait(0.5):
            pass
    finally:
        stack.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
