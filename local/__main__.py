"""``python -m local``: the whole sendledger stack on a laptop.

Settings come from the environment: SENDLEDGER_PORT (8080), SENDLEDGER_MOTO_PORT (5000),
POLL_INTERVAL_SECONDS (5), SENDLEDGER_LOCAL_LOG_FORMAT (text; json for the raw stream) and every
handler setting docs/operations.md lists. Both ports are checked before anything starts; SIGINT and
SIGTERM stop every part within seconds (a second one exits at once).
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

from local import logs  # noqa: E402
from local.ports import Misconfigured, PortTaken  # noqa: E402
from local.stack import (  # noqa: E402
    DEFAULT_MOTO_PORT,
    DEFAULT_PORT,
    ENV_HOST,
    ENV_MOTO_PORT,
    ENV_PORT,
    LocalStack,
)

LOG = logging.getLogger("sendledger.local")
EXIT_MISCONFIGURED = 2
# The kernel may hand SIGTERM to any thread, and CPython runs the Python handler only in the main
# thread when it next executes bytecode: an untimed wait there could sleep through the signal.
SIGNAL_CHECK_SECONDS = 0.25


class StopRequested(BaseException):
    """Raised by the signal handler while the stack is still starting, to abandon the start."""


def _port(variable: str, default: int) -> int:
    raw = os.environ.get(variable) or str(default)
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        raise PortTaken(f"{variable}={raw!r} is not a port number (1-65535)")
    return int(raw)


def main() -> int:
    logs.configure(os.environ)
    try:
        stack = LocalStack(
            port=_port(ENV_PORT, DEFAULT_PORT),
            moto_port=_port(ENV_MOTO_PORT, DEFAULT_MOTO_PORT),
            host=os.environ.get(ENV_HOST) or "127.0.0.1",
        )
    except PortTaken as error:
        print(f"sendledger local stack: {error}", file=sys.stderr, flush=True)
        return EXIT_MISCONFIGURED
    stopping = threading.Event()
    starting = threading.Event()
    starting.set()

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        if stopping.is_set():  # a second Ctrl-C: the user does not want to wait for anything
            os._exit(128 + signum)
        stopping.set()
        LOG.info("%s: stopping", signal.Signals(signum).name)
        if starting.is_set():
            raise StopRequested

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    try:
        try:
            stack.start()
        finally:
            starting.clear()
    except Misconfigured as error:
        stack.stop()
        print(f"sendledger local stack: {error}", file=sys.stderr, flush=True)
        return EXIT_MISCONFIGURED
    except StopRequested:
        stack.stop()
        return 0
    except Exception:
        LOG.exception("the local stack could not start")
        stack.stop()
        return 1
    try:
        while not stopping.wait(SIGNAL_CHECK_SECONDS):
            pass
    finally:
        stack.stop()
    if stack.cycle_in_flight:
        # A cycle outlived the stop budget: its threads must not hold the exit up.
        LOG.warning("a poll or status-out cycle is still running: exiting without waiting for it")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
