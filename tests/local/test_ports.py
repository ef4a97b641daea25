"""The ports the tests and the bench hand a local stack: distinct and free, or the stack refuses to start."""

from __future__ import annotations

import socket

import pytest

from local.ports import PortTaken, check_free, free_ports

# Enough probes that handing the same ephemeral port out twice would show: the kernel's range is
# about 28,000 ports, so 400 one-at-a-time probes share a port in most runs.
MANY = 400


def test_free_ports_are_distinct_even_when_many_are_asked_for() -> None:
    ports = free_ports(MANY)

    assert len(set(ports)) == MANY


def test_free_ports_are_free_to_bind_as_the_stack_binds_them() -> None:
    port, moto_port = free_ports(2)

    check_free([("127.0.0.1", port, "SENDLEDGER_PORT"), ("127.0.0.1", moto_port, "SENDLEDGER_MOTO_PORT")])
    with socket.socket() as server:
        server.bind(("127.0.0.1", port))


def test_the_same_port_for_both_servers_is_refused_before_anything_binds() -> None:
    (port,) = free_ports(1)

    with pytest.raises(PortTaken, match="SENDLEDGER_MOTO_PORT and SENDLEDGER_PORT are both"):
        check_free([("127.0.0.1", port, "SENDLEDGER_PORT"), ("127.0.0.1", port, "SENDLEDGER_MOTO_PORT")])
