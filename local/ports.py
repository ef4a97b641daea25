"""Both ports are checked before anything starts: a taken port is a message, never a hang."""

from __future__ import annotations

import contextlib
import errno
import socket
from collections.abc import Iterable


class Misconfigured(Exception):
    """A setting the stack cannot start with; the message names the variable and what it takes."""


class PortTaken(Misconfigured):
    """A port the stack needs is in use; the message names the variable that moves it."""


def check_free(ports: Iterable[tuple[str, int, str]]) -> None:
    """``ports``: (host, port, environment variable) triples; raises PortTaken for the first taken one.

    The probe binds as the servers will (SO_REUSEADDR, as http.server and werkzeug set it), so a
    port left in TIME_WAIT by a stack that just stopped is not reported as taken.
    """
    seen: dict[int, str] = {}
    for host, port, variable in ports:
        if port and port in seen:
            raise PortTaken(f"{variable} and {seen[port]} are both {port}: give them different ports")
        seen[port] = variable
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError as error:
                why = "is in use" if error.errno == errno.EADDRINUSE else f"cannot be bound ({error.strerror})"
                raise PortTaken(
                    f"port {port} on {host} {why}: set {variable} to a free port (e.g. {variable}={port + 1})"
                ) from None


def free_ports(count: int, host: str = "127.0.0.1") -> tuple[int, ...]:
    """``count`` distinct ports free on ``host`` now, for a stack or a test to bind next.

    Every probe stays bound until all are chosen: probing one at a time, the kernel may hand the
    same ephemeral port out twice, and a stack given it for both its servers refuses to start.
    """
    with contextlib.ExitStack() as held:
        probes = [held.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) for _ in range(count)]
        for probe in probes:
            probe.bind((host, 0))
        return tuple(int(probe.getsockname()[1]) for probe in probes)
