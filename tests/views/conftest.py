"""Helpers for the console page tests: logged-in clients per persona, memories created through
the services (so the Redis mirror runs), and a tiny HTML reader for attributes and ids."""

from html.parser import HTMLParser

import pytest
from django.contrib.auth.models import User

from memories import services
from tests.conftest import login

HX = {"HX-Request": "true"}


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    handle_startendtag = handle_starttag


def tags(html: str | bytes) -> list[tuple[str, dict[str, str]]]:
    """Every start tag as ``(name, attrs)``, attribute values unescaped as a browser would."""
    parser = _Collector()
    parser.feed(html.decode() if isinstance(html, bytes) else html)
    return parser.tags


def attr_values(html, attr: str) -> list[str]:
    return [a[attr] for _, a in tags(html) if attr in a]


def ids(html) -> set[str]:
    return set(attr_values(html, "id"))


def text(response) -> str:
    return response.content.decode()


@pytest.fixture
def norole_client(builtins):
    return login(User.objects.create_user(username="nora", password="pw-nora"))


@pytest.fixture
def make_memory(builtins):
    """Create a memory the way every writer does (services), returning the Memory."""

    def make(content="use argon2 for password hashing", user_id="u-a", **fields):
        memory, _ = services.memory_create(user_id=user_id, content=content, **fields)
        return memory

    return make
