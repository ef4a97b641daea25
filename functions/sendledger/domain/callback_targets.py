"""Which addresses a callback may be sent to: public unicast ones only.

A callback URL's host is resolved when an admin registers it and again before every POST, and
the POST goes to the address that second check vetted (adapters/callbacks_http.py): a name
that resolved to a public address at registration and to 169.254.169.254 (the instance
metadata service), 10.0.0.5 or ::1 a minute later reaches none of them. Refused: private,
loopback, link-local, multicast, reserved, unspecified, shared (100.64.0.0/10) and every other
address IANA does not mark globally reachable, and the same ranges inside an IPv6 address
that embeds an IPv4 one (IPv4-mapped, IPv4-compatible, 6to4, Teredo, NAT64 well-known prefix).

The local stack's receiver listens on loopback: `allow_loopback` (set by the local stack alone,
never by a deployed setting) lets loopback addresses, and only those, through.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from sendledger.domain.caller_settings import CallbackUrl, Refused, UrlRefusal

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
# Not globally reachable by IANA's registries, though not every Python's ipaddress says so.
_SPECIAL_PURPOSE = (
    ipaddress.IPv4Network("192.0.0.0/24"),  # IETF protocol assignments
    ipaddress.IPv4Network("192.88.99.0/24"),  # the deprecated 6to4 relay anycast
)
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries, where a gateway would route to it."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]  # the client's (obfuscation undone by ipaddress)
    if address in _NAT64 or (address in _IPV4_COMPATIBLE and int(address) > 1):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def non_public(address: IPAddress) -> str | None:
    """Why `address` is not a public unicast address (None: it is)."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id:
            return "scoped"
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            why = non_public(embedded)
            if why is not None:
                return f"embeds {embedded} ({why})"
    for why, refused in (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("private", address.is_private),
        ("reserved", address.is_reserved),
        ("site-local", isinstance(address, ipaddress.IPv6Address) and address.is_site_local),
        ("special-purpose", any(address in network for network in _SPECIAL_PURPOSE)),
        ("not globally reachable", not address.is_global),
    ):
        if refused:
            return why
    return None


def parse_address(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def vet_addresses(
    url: CallbackUrl, addresses: Sequence[str], *, allow_loopback: bool = False
) -> tuple[IPAddress, ...] | Refused:
    """The addresses a POST to `url` may connect to: all of what the host resolved to, or a
    refusal when any one is not public (a name with one internal address among public ones is
    refused whole: which one a client picks is not ours to know)."""
    if not addresses:
        return Refused(UrlRefusal.UNRESOLVED, f"{url.host} has no address")
    vetted: list[IPAddress] = []
    for text in addresses:
        address = parse_address(text)
        if address is None:
            return Refused(UrlRefusal.UNRESOLVED, f"{url.host} resolved to something that is no address")
        why = non_public(address)
        if why is not None and not (allow_loopback and _loopback(address)):
            return Refused(UrlRefusal.NOT_PUBLIC, f"{url.host} is {address}: {why}")
        vetted.append(address)
    if not url.secure and not all(_loopback(address) for address in vetted):
        return Refused(UrlRefusal.NOT_HTTPS, "callback URLs are https:// (http only to the local receiver)")
    return tuple(dict.fromkeys(vetted))


def _loopback(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback
