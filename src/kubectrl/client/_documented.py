"""``documented_by``: a verb's implementation takes its documentation from its declaration."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["documented_by"]

F = TypeVar("F", bound=Callable[..., Any])


def documented_by(declaration: Callable[..., Any]) -> Callable[[F], F]:
    """Give an implementation the docstring and public name of the protocol method it implements.

    A verb's documentation is written once, on its protocol declaration; a client's private
    implementation (``AsyncClient._get``, bound to the public ``get``) takes it from there, and
    is named after the verb (``AsyncClient.get``), so ``help(AsyncClient.get)`` and the blocking
    twins derived from it show the verb and its text.

    Example::

        >>> from kubectrl.client._interfaces import Reader
        >>> class Impl:
        ...     @documented_by(Reader.get)
        ...     async def _get(self, *args: Any, **kwargs: Any) -> Any: ...
        >>> Impl._get.__doc__.splitlines()[0]
        'Read one object (or one of its subresources, e.g. ``"scale"``: a dict).'
    """

    def decorate(implementation: F) -> F:
        doc = declaration.__doc__
        if not doc:
            raise TypeError(f"{declaration.__qualname__} has no docstring to document with")
        implementation.__doc__ = doc
        owner = implementation.__qualname__.rpartition(".")[0]
        implementation.__name__ = declaration.__name__
        implementation.__qualname__ = (
            f"{owner}.{declaration.__name__}" if owner else declaration.__name__
        )
        return implementation

    return decorate
