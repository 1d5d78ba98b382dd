"""Blocking twins of asyncio classes, derived from the async methods instead of re-declared.

A blocking facade runs its async target on a private event loop in a daemon thread (a
:class:`Portal`) and waits for each call. Its methods are generated from the target class's
methods, so each verb's parameters, defaults, types and docstring are declared once, on the async
method:

- :func:`blocking` turns ``async def m(self, ...) -> R`` into ``def m(self, ...) -> R``;
- :func:`blocking_iterator` turns ``def m(self, ...) -> AsyncIterator[T]`` (an async generator)
  into ``def m(self, ...) -> Iterator[T]``;
- :func:`blocking_wrapped` calls a plain method and wraps what it returns (e.g. a watch stream
  into its blocking twin).

The generated functions carry the async method's signature (``inspect.signature``, IDEs) and its
docstring with the examples made blocking; mypy sees the exact parameters through ``ParamSpec``.
A facade subclasses :class:`BlockingFacade` and sets ``_portal`` and ``_target``.

Example::

    class BlockingClient(BlockingFacade):
        delete = blocking(AsyncClient.delete)
        scale = blocking(AsyncClient.scale)

Overloaded verbs cannot carry their overloads through ``ParamSpec``: a facade derives them
under private names (``_get = blocking(AsyncClient._get)``) and takes its public signatures
from a blocking interface (:mod:`kubectrl.client._interfaces`), which mypy checks them against.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, Concatenate, ParamSpec, TypeVar

__all__ = [
    "BlockingFacade",
    "Portal",
    "SyncIterator",
    "blocking",
    "blocking_iterator",
    "blocking_wrapped",
]

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")
W = TypeVar("W")


class Portal:
    """An event loop running in a daemon thread; :meth:`call` runs a coroutine there and waits.

    Calls may come from any number of threads at once. Calling from the loop's own thread would
    deadlock, so it raises ``RuntimeError`` instead.
    """

    def __init__(self, name: str = "kubectrl-client") -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self.thread.start()
        self.closed = False

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and return its result (or raise its exception)."""
        if threading.current_thread() is self.thread:
            coro.close()
            raise RuntimeError("a blocking kubectrl client was called from its own loop thread")
        if self.closed:
            coro.close()
            raise RuntimeError("this blocking kubectrl client is closed")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def stop(self) -> None:
        """Stop the loop and join its thread. Idempotent."""
        if self.closed:
            return
        self.closed = True
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


async def _anext(agen: AsyncIterator[T]) -> T:
    return await agen.__anext__()


class SyncIterator(Iterator[T]):
    """A blocking iterator over an async iterator that lives on a :class:`Portal`'s loop.

    ``close()`` stops early and releases what the async iterator holds (e.g. its request).
    """

    def __init__(self, portal: Portal, agen: AsyncIterator[T]) -> None:
        self._portal = portal
        self._agen = agen
        self._done = False

    def __iter__(self) -> SyncIterator[T]:
        return self

    def __next__(self) -> T:
        if self._done:
            raise StopIteration
        try:
            return self._portal.call(_anext(self._agen))
        except StopAsyncIteration:
            self._done = True
            raise StopIteration from None

    def close(self) -> None:
        """Stop early and release the underlying request."""
        if not self._done:
            self._done = True
            aclose = getattr(self._agen, "aclose", None)
            if aclose is not None and not self._portal.closed:
                self._portal.call(aclose())


class BlockingFacade:
    """Base of a blocking twin: ``_portal`` runs the loop, ``_target`` is the async object whose
    methods the generated methods call."""

    _portal: Portal
    _target: Any


_ASYNC_WORDS = re.compile(r"\bawait\s+|\basync\s+(?=for\b|with\b)")


def _derive(
    wrapper: Callable[..., Any], fn: Callable[..., Any], returns: Callable[[Any], Any]
) -> None:
    # An implementation bound to a public name is named after it (``_get`` serves ``get``).
    name = getattr(fn, "__name__", "method").lstrip("_")
    owner = getattr(fn, "__qualname__", name).rsplit(".", 1)[0]
    doc = inspect.getdoc(fn) or ""
    # The examples are the async method's; the blocking call reads the same without the keywords.
    doc = _ASYNC_WORDS.sub("", doc)
    wrapper.__name__ = name
    wrapper.__qualname__ = name
    wrapper.__doc__ = f"Blocking :meth:`{owner}.{name}`.\n\n{doc}" if doc else None
    wrapper.__module__ = getattr(fn, "__module__", wrapper.__module__)
    signature = inspect.signature(fn)
    wrapper.__signature__ = signature.replace(  # type: ignore[attr-defined]
        return_annotation=returns(signature.return_annotation)
    )


def _same(annotation: Any) -> Any:
    return annotation


def blocking(
    fn: Callable[Concatenate[Any, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[BlockingFacade, P], R]:
    """A blocking method from an ``async def`` method: same parameters, same result.

    Example::

        class BlockingClient(BlockingFacade):
            delete = blocking(AsyncClient.delete)
    """

    def method(self: BlockingFacade, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._portal.call(fn(self._target, *args, **kwargs))

    _derive(method, fn, _same)
    return method


def _iterator_annotation(annotation: Any) -> Any:
    if isinstance(annotation, str):
        prefix = r"^(?:collections\.abc\.|typing\.)?Async(Iterator|Generator)\b"
        return re.sub(prefix, r"\1", annotation)
    return annotation


def blocking_iterator(
    fn: Callable[Concatenate[Any, P], AsyncIterator[T]],
) -> Callable[Concatenate[BlockingFacade, P], Iterator[T]]:
    """A method returning a blocking iterator from one returning an async iterator.

    Example::

        class BlockingPods(BlockingFacade):
            _log_stream = blocking_iterator(Pods._log_stream)
    """

    def method(self: BlockingFacade, /, *args: P.args, **kwargs: P.kwargs) -> Iterator[T]:
        return SyncIterator(self._portal, fn(self._target, *args, **kwargs))

    _derive(method, fn, _iterator_annotation)
    return method


def blocking_wrapped(
    fn: Callable[Concatenate[Any, P], T],
    wrap: Callable[[Portal, T], W],
    *,
    returns: str,
) -> Callable[Concatenate[BlockingFacade, P], W]:
    """A method calling a plain (non-async) method and wrapping its result for blocking use.

    ``returns`` names the wrapper's type for the generated signature.

    Example::

        class BlockingClient(BlockingFacade):
            watch = blocking_wrapped(
                AsyncClient.watch, BlockingWatchStream, returns="BlockingWatchStream"
            )
    """

    def method(self: BlockingFacade, /, *args: P.args, **kwargs: P.kwargs) -> W:
        return wrap(self._portal, fn(self._target, *args, **kwargs))

    _derive(method, fn, lambda _: returns)
    return method
