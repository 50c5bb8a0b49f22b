"""Which webhook URLs may be called: http(s) only, and never an address inside our own
network unless the ``WEBHOOKS_ALLOW_PRIVATE`` setting says so (server-side request forgery:
an admin token must not turn the worker into a probe of localhost, the cloud metadata service
at 169.254.169.254 or the LAN).

The host is resolved and every address it resolves to is checked (a public name pointing at
127.0.0.1 is refused too); delivery checks again before each attempt, since DNS can change
after registration. The host checked is the one httpx, which delivers, connects to. Pure: the
resolver is passed in, no Django.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from urllib.parse import urlsplit

import httpx

Resolver = Callable[[str, int], list[str]]

# IPv6 prefixes whose last 32 bits are an IPv4 address the packet really goes to:
# IPv4-compatible (::/96, deprecated), IPv4-mapped (::ffff:0:0/96), IPv4-translated
# (::ffff:0:0:0/96, RFC 2765) and the well-known NAT64 prefix (64:ff9b::/96, RFC 6052).
_IPV4_IN_LAST_32_BITS = [ipaddress.ip_network(n) for n in
                         ("::/96", "::ffff:0:0/96", "::ffff:0:0:0/96", "64:ff9b::/96")]
# NAT64 for local use (RFC 8215): where the IPv4 address sits depends on the prefix length
# the operator chose, so none can be checked: the whole prefix is refused.
_LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")


class UnsafeURL(ValueError):
    """The URL is not http(s), is malformed (no host, a bad port, whitespace or control
    characters), does not resolve, or reaches a private address."""


def resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (IPv4 and IPv6)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return sorted({info[4][0] for info in infos})


def _public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return ip.is_global and not ip.is_multicast


def is_internal(address: str) -> bool:
    """Loopback, private (RFC 1918, fc00::/7), link-local, CGNAT, reserved, multicast or
    unspecified: anything that is not a public unicast address. An IPv6 address carrying
    an IPv4 one (mapped, compatible, NAT64, 6to4, Teredo) is internal when that one is."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if any(ip in network for network in _IPV4_IN_LAST_32_BITS):
            # Another spelling (or a translation) of an IPv4 address: judged as that one.
            ip = ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF)
        elif ip in _LOCAL_NAT64 or not all(_public(v4) for v4 in _tunnelled_ipv4(ip)):
            return True
    return not _public(ip)


def _tunnelled_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses a 6to4 (2002::/16) or Teredo (2001::/32: its server's and its
    client's) address tunnels to; none for another address."""
    if ip.sixtofour:
        return [ip.sixtofour]
    return list(ip.teredo or ())


def _delivery_host(url: str) -> str:
    """The host httpx (which delivers) connects to, as it sends it to the resolver: IDNA
    2008, where the socket module would encode a name itself differently (IDNA 2003: "faß.de"
    would be checked as fass.de and called as xn--fa-hia.de). UnsafeURL when httpx cannot take
    the URL or the name cannot be sent (an empty or over-long label)."""
    try:
        parsed = httpx.URL(url)
        parsed.host  # noqa: B018 - decodes the name: refuses a malformed xn-- label
        host = parsed.raw_host.decode("ascii")
        host.encode("idna")  # what the socket module does with it: label lengths
    except (httpx.InvalidURL, UnicodeError) as exc:
        raise UnsafeURL(f"the URL is not valid ({exc})") from None
    return host


def check_url(url: str, *, allow_private: bool, resolver: Resolver = resolve) -> str:
    """``url`` unchanged when it may be called, else UnsafeURL naming the reason: not
    http(s), no host, credentials, whitespace or control characters anywhere, a port outside
    1..65535, a URL httpx cannot send, and (unless ``allow_private``) a host that does not
    resolve or resolves to an internal address (:func:`is_internal`)."""
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        # urlsplit would drop tabs and line breaks silently; httpx refuses them at every try.
        raise UnsafeURL("the URL must not contain spaces, line breaks or other control "
                        "characters (percent-encode them)")
    try:
        parts = urlsplit(url)  # checks a bracketed host: ValueError unless an IP address
    except ValueError as exc:
        raise UnsafeURL(f"the URL is not valid ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise UnsafeURL("the URL must start with http:// or https://")
    if not parts.hostname:
        raise UnsafeURL("the URL has no host")
    if parts.username or parts.password:
        raise UnsafeURL("credentials in the URL are not allowed; use the signing secret")
    try:
        port = parts.port  # None when absent; ValueError unless ASCII digits in 0..65535
    except ValueError:
        port = 0
    if port == 0:
        raise UnsafeURL("the URL's port is not a number in 1..65535")
    host = _delivery_host(url)
    if allow_private:
        return url
    try:
        addresses = resolver(host, port or (443 if parts.scheme == "https" else 80))
    except OSError as exc:
        raise UnsafeURL(f"the host {host!r} does not resolve ({exc})") from None
    internal = [a for a in addresses if is_internal(a)]
    if internal or not addresses:
        raise UnsafeURL(f"the host {host!r} resolves to a private, loopback or "
                        f"link-local address ({', '.join(internal) or 'none'}); "
                        "set WEBHOOKS_ALLOW_PRIVATE=1 to allow it")
    return url
