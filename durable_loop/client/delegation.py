"""A small client's method reached under its old name on a larger client, with its
signature (for type checkers) and docstring: ``SessionClient.confirm`` is
``SessionClient.approvals.confirm``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

P = ParamSpec("P")
R = TypeVar("R")


class Delegated(Generic[P, R]):
    """``name = Delegated("sub", SubClient.method)`` in a class body: ``obj.name(...)``
    calls ``obj.sub.method(...)``. ``doc`` stands for the method's docstring when given."""

    def __init__(
        self, attribute: str, method: Callable[Concatenate[Any, P], R], doc: str | None = None
    ) -> None:
        self.attribute = attribute
        self.name = method.__name__
        self.__doc__ = doc or method.__doc__

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Delegated[P, R]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> Callable[P, R]: ...

    def __get__(
        self, obj: object | None, owner: type | None = None
    ) -> Delegated[P, R] | Callable[P, R]:
        if obj is None:
            return self
        method: Callable[P, R] = getattr(getattr(obj, self.attribute), self.name)
        return method
