"""Where a callback may go: public unicast addresses only, IPv4 and IPv6, embedded IPv4 included."""

from __future__ import annotations

import ipaddress

import pytest

from sendledger.domain.callback_targets import non_public, vet_addresses
from sendledger.domain.caller_settings import CallbackUrl, Refused, UrlRefusal, parse_callback_url

REFUSED = {
    # IPv4
    "0.0.0.0": "unspecified",
    "0.1.2.3": "this network (0/8)",
    "10.0.0.5": "private",
    "10.255.255.255": "private",
    "100.64.0.1": "shared (carrier-grade NAT)",
    "100.127.255.254": "shared (carrier-grade NAT)",
    "127.0.0.1": "loopback",
    "127.8.9.10": "loopback",
    "169.254.169.254": "link-local (instance metadata)",
    "169.254.0.1": "link-local",
    "172.16.0.1": "private",
    "172.31.255.254": "private",
    "192.0.0.8": "IETF protocol assignments",
    "192.88.99.1": "6to4 relay anycast",
    "64:ff9b::808:808": "NAT64 (refused whole: a gateway inside the network translates it)",
    "192.0.2.1": "documentation",
    "192.168.1.1": "private",
    "198.18.0.1": "benchmarking",
    "198.51.100.7": "documentation",
    "203.0.113.9": "documentation",
    "224.0.0.1": "multicast",
    "239.255.255.250": "multicast",
    "240.0.0.1": "reserved",
    "255.255.255.255": "broadcast",
    # IPv6
    "::": "unspecified",
    "::1": "loopback",
    "fe80::1": "link-local",
    "fe80::1%eth0": "link-local, scoped",
    "fec0::1": "site-local",
    "fc00::1": "unique local",
    "fd00:ec2::254": "unique local (EC2 IPv6 metadata)",
    "ff02::1": "multicast",
    "ff0e::1": "multicast (global scope)",
    "2001:db8::1": "documentation",
    "100::1": "discard-only",
    "2001:10::1": "ORCHID",
    # IPv4 inside IPv6
    "::ffff:10.0.0.5": "IPv4-mapped private",
    "::ffff:127.0.0.1": "IPv4-mapped loopback",
    "::ffff:169.254.169.254": "IPv4-mapped metadata",
    "::10.0.0.5": "IPv4-compatible private",
    "2002:a00:5::1": "6to4 of 10.0.0.5",
    "2002:7f00:1::1": "6to4 of 127.0.0.1",
    "2001:0:4136:e378:8000:63bf:f5ff:fffa": "Teredo of 10.0.0.5",
    "64:ff9b::a00:5": "NAT64 of 10.0.0.5",
    "64:ff9b::a9fe:a9fe": "NAT64 of 169.254.169.254",
}
PUBLIC = ["93.184.215.14", "8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450:4001:82b::200e"]


@pytest.mark.parametrize("address", sorted(REFUSED))
def test_every_non_public_range_is_refused(address: str) -> None:
    assert non_public(ipaddress.ip_address(address)) is not None, REFUSED[address]


@pytest.mark.parametrize("address", PUBLIC)
def test_public_unicast_addresses_pass(address: str) -> None:
    assert non_public(ipaddress.ip_address(address)) is None


def url(text: str = "https://hooks.example.com/x", allow_http: bool = False) -> CallbackUrl:
    parsed = parse_callback_url(text, allow_http=allow_http)
    assert isinstance(parsed, CallbackUrl)
    return parsed


def test_one_internal_address_among_public_ones_refuses_the_name() -> None:
    refused = vet_addresses(url(), ["93.184.215.14", "10.0.0.5"])
    assert isinstance(refused, Refused) and refused.reason is UrlRefusal.NOT_PUBLIC
    assert "10.0.0.5" in refused.detail and "private" in refused.detail


def test_a_name_without_addresses_or_with_garbage_is_unresolved() -> None:
    for answer in ([], ["not-an-address"]):
        refused = vet_addresses(url(), answer)
        assert isinstance(refused, Refused) and refused.reason is UrlRefusal.UNRESOLVED


def test_vetted_addresses_come_back_in_order_once_each() -> None:
    vetted = vet_addresses(url(), ["2606:4700:4700::1111", "1.1.1.1", "1.1.1.1"])
    assert vetted == (ipaddress.ip_address("2606:4700:4700::1111"), ipaddress.ip_address("1.1.1.1"))


def test_the_local_allowance_lets_loopback_and_only_loopback_through() -> None:
    local = url("http://127.0.0.1:9000/hook", allow_http=True)
    assert vet_addresses(local, ["127.0.0.1"], allow_loopback=True) == (ipaddress.ip_address("127.0.0.1"),)
    assert isinstance(vet_addresses(local, ["127.0.0.1"]), Refused)  # not without the allowance
    for inside in ("10.0.0.5", "169.254.169.254", "192.168.1.1", "fd00::1"):
        refused = vet_addresses(url("https://x.example/h"), [inside], allow_loopback=True)
        assert isinstance(refused, Refused) and refused.reason is UrlRefusal.NOT_PUBLIC, inside
    # plain http to a public address stays refused even where loopback is allowed
    plain = vet_addresses(url("http://hooks.example.com/h", allow_http=True), ["93.184.215.14"], allow_loopback=True)
    assert isinstance(plain, Refused) and plain.reason is UrlRefusal.NOT_HTTPS
