"""Webhook signatures and the address check (pure: no database, no Redis)."""

import hashlib
import hmac

import pytest

from integrations.webhooks import signing
from integrations.webhooks.addresses import UnsafeURL, check_url, is_internal

SECRET = "whsec_test"
BODY = b'{"id":"evt_1","type":"memory.created"}'


def test_the_signature_is_hmac_sha256_of_timestamp_dot_body():
    header = signing.sign(SECRET, BODY, now=1_700_000_000)
    expected = hmac.new(SECRET.encode(), b"1700000000." + BODY, hashlib.sha256).hexdigest()
    assert header == f"t=1700000000,v1={expected}"
    assert signing.verify(SECRET, BODY, header, now=1_700_000_010) == 1_700_000_000


@pytest.mark.parametrize("header, reason", [
    (None, "missing"),
    ("v1=abc", "malformed"),
    ("t=x,v1=abc", "malformed"),
    ("t=1700000000", "malformed"),
])
def test_it_refuses_malformed_headers(header, reason):
    with pytest.raises(signing.SignatureError, match=reason):
        signing.verify(SECRET, BODY, header, now=1_700_000_000)


def test_it_refuses_another_body_another_secret_and_an_old_timestamp():
    header = signing.sign(SECRET, BODY, now=1_700_000_000)
    with pytest.raises(signing.SignatureError, match="does not match"):
        signing.verify(SECRET, BODY + b" ", header, now=1_700_000_000)
    with pytest.raises(signing.SignatureError, match="does not match"):
        signing.verify("whsec_other", BODY, header, now=1_700_000_000)
    with pytest.raises(signing.SignatureError, match="tolerance"):
        signing.verify(SECRET, BODY, header, now=1_700_000_000 + 301)


def test_any_of_several_signatures_may_match_during_a_rotation():
    good = signing.sign(SECRET, BODY, now=1_700_000_000)
    header = "t=1700000000,v1=" + "0" * 64 + "," + good.split(",")[1]
    assert signing.verify(SECRET, BODY, header, now=1_700_000_000) == 1_700_000_000


@pytest.mark.parametrize("address", [
    "127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
    "0.0.0.0", "::1", "fe80::1", "fc00::1", "::ffff:127.0.0.1", "224.0.0.1",
    # IPv6 addresses that carry an internal IPv4 one: IPv4-compatible, IPv4-translated,
    # NAT64 (well-known and local-use prefixes), 6to4, Teredo.
    "::127.0.0.1", "::7f00:1", "::a00:1", "::ffff:0:7f00:1", "64:ff9b::7f00:1",
    "64:ff9b::a9fe:a9fe", "64:ff9b:1::808:808", "2002:7f00:1::", "2002:a9fe:a9fe::1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
])
def test_internal_addresses_are_recognised(address):
    assert is_internal(address)


@pytest.mark.parametrize("address", [
    "93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946",
    # ... and the same forms carrying a public one.
    "::ffff:93.184.216.34", "64:ff9b::5db8:d822", "2002:5db8:d822::1",
])
def test_public_addresses_are_not_internal(address):
    assert not is_internal(address)


def fixed(*addresses):
    return lambda host, port: list(addresses)


def test_check_url_resolves_the_host_and_refuses_any_internal_answer():
    assert check_url("https://hooks.example/x", allow_private=False,
                     resolver=fixed("93.184.216.34")) == "https://hooks.example/x"
    with pytest.raises(UnsafeURL, match="private"):
        check_url("https://rebind.example/", allow_private=False,
                  resolver=fixed("93.184.216.34", "127.0.0.1"))
    with pytest.raises(UnsafeURL, match="private"):
        check_url("http://localhost:8080/hook", allow_private=False)  # the real resolver


def test_check_url_resolves_the_host_delivery_connects_to():
    """httpx sends "faß.de" as xn--fa-hia.de (IDNA 2008); the socket module would have
    resolved fass.de (IDNA 2003), another name."""
    asked = []

    def recording(host, port):
        asked.append((host, port))
        return ["93.184.216.34"]

    check_url("https://faß.de/hook", allow_private=False, resolver=recording)
    check_url("http://[64:ff9b::5db8:d822]:8080/", allow_private=False, resolver=recording)
    assert asked == [("xn--fa-hia.de", 443), ("64:ff9b::5db8:d822", 8080)]


def test_check_url_refuses_a_host_that_cannot_be_parsed_or_sent():
    for url in ("http://a..b/hook", "http://xn--a.example/hook", f"http://{'a' * 64}.example/",
                "http://[fe80::1%25%ff]:9/", "http://[v1.x]/"):
        with pytest.raises(UnsafeURL, match="not valid"):
            check_url(url, allow_private=True)


def test_check_url_refuses_other_schemes_credentials_and_bad_ports():
    with pytest.raises(UnsafeURL, match="http"):
        check_url("ftp://hooks.example/", allow_private=True)
    with pytest.raises(UnsafeURL, match="credentials"):
        check_url("https://user:pw@hooks.example/", allow_private=True)
    with pytest.raises(UnsafeURL, match="port"):
        check_url("https://hooks.example:99999/", allow_private=True)
    with pytest.raises(UnsafeURL, match="no host"):
        check_url("https:///path", allow_private=True)


@pytest.mark.parametrize("url", [
    "http://hooks.example/hook\r\nX-Injected: 1", "http://hooks.example/\nhook",
    "http://hooks.example/a b", "http://hooks.exa mple/", "http://hooks.example/\tx",
    "http://hooks.example/\x00", "http://hooks.example/\x7f", "http://hooks.example/\u2028",
    "http://hooks.example/\u200bx", "http://hooks.example/\xa0",
])
def test_check_url_refuses_whitespace_and_control_characters(url):
    with pytest.raises(UnsafeURL, match="control characters"):
        check_url(url, allow_private=True)


@pytest.mark.parametrize("port", ["0", "00", "65536", "99999", "-1", "+80", "x", "８０"])
def test_check_url_refuses_a_port_outside_1_to_65535(port):
    for host in ("hooks.example", "127.0.0.1", "[::1]"):
        with pytest.raises(UnsafeURL, match="port"):
            check_url(f"http://{host}:{port}/hook", allow_private=True)


def test_the_setting_allows_private_addresses():
    assert check_url("http://127.0.0.1:9/hook", allow_private=True) == "http://127.0.0.1:9/hook"


def test_an_unresolvable_host_is_refused():
    def fail(host, port):
        raise OSError("Name or service not known")

    with pytest.raises(UnsafeURL, match="does not resolve"):
        check_url("https://nowhere.invalid/", allow_private=False, resolver=fail)
