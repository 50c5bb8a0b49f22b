"""How an answer body becomes what a call returns: one parser per answer shape, handed to
:class:`~memory_console_client._http.Call` by the endpoints."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from . import models as m

M = TypeVar("M", bound=BaseModel)


def _one(model: type[M]) -> Callable[[Any], M]:
    return model.model_validate


def _page(key: str, model: type[M]) -> Callable[[Any], m.Page[M]]:
    """A list answer ``{key: [...], "next_cursor"}``; an answer without ``next_cursor``
    (a list that does not page yet) is a last page."""

    def parse(body: Any) -> m.Page[M]:
        items = [model.model_validate(item) for item in body[key]]
        return m.Page[model](items=items, next_cursor=body.get("next_cursor"))

    return parse


def _none(body: Any) -> None:
    return None


def _raw(body: Any) -> Any:
    return body


def _job_or_plan(plan: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda body: m.JobAccepted.model_validate(body) if "job_id" in body else plan(body)
