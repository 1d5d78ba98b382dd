"""The handler call convention: keyword arguments, kopf-style, each handler taking only those it
declares (or all of them with ``**kwargs``).

kopf passes its handlers a fixed set of keyword arguments (``kopf/_core/actions/invocation.py``
and ``docs/kwargs.rst``); so do the operator's handlers, daemons and timers: ``body``, ``spec``,
``meta``, ``status``, ``name``, ``namespace``, ``uid``, ``labels``, ``annotations``, ``logger``,
``patch``, ``memo``, ``retry``, ``started``, ``runtime`` and the cause's own (``old``, ``new``,
``diff``; ``stopped`` for daemons), plus every index by its name.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

__all__ = ["call_handler", "call_handler_sync", "object_kwargs", "object_logger"]

_log = logging.getLogger("kubectrl.operator")


def _accepted(fn: Callable[..., Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The subset of ``kwargs`` that ``fn`` declares (all of them if it takes ``**kwargs``).

    A required parameter that no keyword provides is a :class:`TypeError` naming it and the
    keywords there are, not a silent ``None``.
    """
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin without a signature: give it everything
        return dict(kwargs)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return dict(kwargs)
    chosen: dict[str, Any] = {}
    for pname, param in params.items():
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.POSITIONAL_ONLY):
            if param.kind is inspect.Parameter.POSITIONAL_ONLY and param.default is param.empty:
                raise TypeError(
                    f"handler {_name(fn)}: positional-only parameter {pname!r}; handlers are "
                    "called with keyword arguments only"
                )
            continue
        if pname in kwargs:
            chosen[pname] = kwargs[pname]
        elif param.default is param.empty:
            raise TypeError(
                f"handler {_name(fn)}: no keyword argument {pname!r} is passed to it "
                f"(passed: {', '.join(sorted(kwargs))})"
            )
    return chosen


def _name(fn: Callable[..., Any]) -> str:
    return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or fn)


async def call_handler(fn: Callable[..., Any], **kwargs: Any) -> Any:
    """Call ``fn`` with the keyword arguments it accepts; await an ``async def``, run a ``def``
    in a thread (with the caller's context variables), and return what it returned.

    Example::

        >>> import asyncio
        >>> def handler(name: str, **_: object) -> str:
        ...     return f"hello {name}"
        >>> asyncio.run(call_handler(handler, name="a", namespace="ns"))
        'hello a'
    """
    chosen = _accepted(fn, kwargs)
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an object with an async __call__
    ):
        return await fn(**chosen)
    context = contextvars.copy_context()
    result = await asyncio.to_thread(context.run, functools.partial(fn, **chosen))
    if inspect.isawaitable(result):
        return await result
    return result


def call_handler_sync(fn: Callable[..., Any], **kwargs: Any) -> Any:
    """Call a plain ``def`` ``fn`` at once, in this thread, with the keyword arguments it accepts
    (for index functions, which run inside the informer's event delivery).

    Example::

        >>> call_handler_sync(lambda name, **_: name.upper(), name="a", spec={})
        'A'
    """
    if inspect.iscoroutinefunction(fn):
        raise TypeError(f"{_name(fn)} must be a plain def here, not an async def")
    return fn(**_accepted(fn, kwargs))


def object_logger(
    obj: Mapping[str, Any], logger: logging.Logger | None = None
) -> logging.LoggerAdapter[logging.Logger]:
    """A logger adapter whose records name the object (``[namespace/name]`` prefix and
    ``namespace``/``object_name`` extra fields).

    Example::

        >>> object_logger({"metadata": {"name": "a", "namespace": "ns"}}).extra["object_name"]
        'a'
    """
    meta = obj.get("metadata") or {}
    return _ObjectLogger(
        logger or _log,
        {"namespace": meta.get("namespace") or "", "object_name": meta.get("name") or ""},
    )


if TYPE_CHECKING:
    _Adapter = logging.LoggerAdapter[logging.Logger]
else:  # LoggerAdapter is subscriptable at runtime from Python 3.11 only
    _Adapter = logging.LoggerAdapter


class _ObjectLogger(_Adapter):
    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        extra = self.extra or {}
        ns, name = extra.get("namespace"), extra.get("object_name")
        where = f"{ns}/{name}" if ns else str(name)
        kwargs["extra"] = {**extra, **(kwargs.get("extra") or {})}
        return f"[{where}] {msg}", kwargs


def object_kwargs(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The object's own keyword arguments: ``body``, ``spec``, ``meta``, ``status``, ``name``,
    ``namespace``, ``uid``, ``labels``, ``annotations`` and ``logger``.

    Example::

        >>> object_kwargs({"metadata": {"name": "a"}, "spec": {"x": 1}})["spec"]
        {'x': 1}
    """
    meta = obj.get("metadata") or {}
    return {
        "body": obj,
        "spec": obj.get("spec") or {},
        "meta": meta,
        "status": obj.get("status") or {},
        "name": meta.get("name"),
        "namespace": meta.get("namespace"),
        "uid": meta.get("uid"),
        "labels": meta.get("labels") or {},
        "annotations": meta.get("annotations") or {},
        "logger": object_logger(obj),
    }
