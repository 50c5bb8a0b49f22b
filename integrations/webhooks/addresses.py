"""Which webhook URLs may be called: http(s) only, and never an address inside our own
network unless the ``WEBHOOKS_ALLOW_PRIVATE`` setting says so (server-side request forgery:
an admin token must not turn the worker into a probe of localhost, the cloud metadata service
at 169.254.169.254 or the LAN).

The host is resolved and every address it resolves to is checked (a public name pointing at
127.0.0.1 is refused too); delivery checks again before each attempt, since DNS can change
after registration. Pure: the resolver is passed in, no Django.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from urllib.parse import urlsplit

Resolver = Callable[[str, int], list[str]]


class UnsafeURL(ValueError):
    """The URL is not http(s), has no host, does not resolve, or reaches a private address."""


def resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (IPv4 and IPv6)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return sorted({info[4][0] for info in infos})


def is_internal(address: str) -> bool:
    """Loopback, private (RFC 1918, fc00::/7), link-local, CGNAT, reserved, multicast or
    unspecified: anything that is not a public unicast address."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return not ip.is_global or ip.is_multicast


def check_url(url: str, *, allow_private: bool, resolver: Resolver = resolve) -> str:
    """``url`` unchanged when it may be called, else UnsafeURL naming the reason."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise UnsafeURL("the URL must start with http:// or https://")
    if not parts.hostname:
        raise UnsafeURL("the URL has no host")
    if parts.username or parts.password:
        raise UnsafeURL("credentials in the URL are not allowed; use the signing secret")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise UnsafeURL("the URL's port is not a number in 1..65535") from None
    if allow_private:
        return url
    try:
        addresses = resolver(parts.hostname, port)
    except OSError as exc:
        raise UnsafeURL(f"the host {parts.hostname!r} does not resolve ({exc})") from None
    internal = [a for a in addresses if is_internal(a)]
    if internal or not addresses:
        raise UnsafeURL(f"the host {parts.hostname!r} resolves to a private, loopback or "
                        f"link-local address ({', '.join(internal) or 'none'}); "
                        "set WEBHOOKS_ALLOW_PRIVATE=1 to allow it")
    return url
