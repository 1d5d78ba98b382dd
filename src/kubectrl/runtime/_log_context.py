"""The reconcile's fields on every log record made inside it (controller-runtime's
``log.FromContext``), through a wrapped :func:`logging.setLogRecordFactory`.

A record made while a reconcile runs (in its task, or its thread for a ``def`` reconciler)
remembers that reconcile; its fields (``controller``, ``namespace``, ``object_name``,
``reconcile_id``; ``controller_group`` and ``controller_kind`` for a Builder's controller) become
record attributes when the record is formatted
(:meth:`logging.LogRecord.getMessage`, which every :class:`logging.Formatter` calls first) or
when one of them is read. Not at creation: :meth:`logging.Logger.makeRecord` refuses an
``extra`` key the record already has, and a caller's ``extra={"reconcile_id": ...}`` must keep
working (and wins over the context's value).

This module knows nothing of the controller: :func:`install` is given the function that tells
the running reconcile (``current_reconcile``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["FIELDS", "install", "installed", "uninstall"]

#: The attributes a record made inside a reconcile gets (``name`` is the logger's, hence
#: ``object_name``), as the controller's own records carry them; ``controller_group`` and
#: ``controller_kind`` only for a controller a Builder made (its ``for_`` kind).
FIELDS = (
    "controller",
    "controller_group",
    "controller_kind",
    "namespace",
    "object_name",
    "reconcile_id",
)

_KEY = "_kubectrl_reconcile"


class _Request(Protocol):
    @property
    def namespace(self) -> str: ...

    @property
    def name(self) -> str: ...


class _Info(Protocol):
    @property
    def controller(self) -> str: ...

    @property
    def request(self) -> _Request: ...

    @property
    def reconcile_id(self) -> str: ...

    @property
    def controller_group(self) -> str: ...

    @property
    def controller_kind(self) -> str: ...


def fields_of(info: _Info) -> dict[str, str]:
    """The log fields of a running reconcile."""
    fields = {"controller": info.controller}
    if info.controller_kind:
        fields["controller_group"] = info.controller_group
        fields["controller_kind"] = info.controller_kind
    fields.update(
        namespace=info.request.namespace,
        object_name=info.request.name,
        reconcile_id=info.reconcile_id,
    )
    return fields


class _ContextRecord:
    """Mixed into a record's class: fills the reconcile's fields when they are first needed."""

    def _kubectrl_fill(self) -> None:
        state = self.__dict__
        info = state.pop(_KEY, None)
        if info is not None:
            for key, value in fields_of(info).items():
                state.setdefault(key, value)

    def getMessage(self) -> str:  # noqa: N802 - logging's name
        self._kubectrl_fill()
        message: str = super().getMessage()  # type: ignore[misc]
        return message

    def __getattr__(self, name: str) -> Any:
        # Only for attributes not found: a filter reading record.reconcile_id before any
        # formatter ran.
        if name in FIELDS and _KEY in self.__dict__:
            self._kubectrl_fill()
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled or copied (a QueueHandler to another process) as a plain LogRecord with the
        # fields filled in: the mixed class is not importable by name.
        self._kubectrl_fill()
        return (logging.makeLogRecord, (dict(self.__dict__),))


_lock = threading.Lock()
_classes: dict[type[logging.LogRecord], type[logging.LogRecord]] = {}
_state: dict[str, Any] = {"factory": None, "previous": None}


def _with_context(cls: type[logging.LogRecord]) -> type[logging.LogRecord]:
    mixed = _classes.get(cls)
    if mixed is None:
        with _lock:
            mixed = _classes.get(cls)
            if mixed is None:
                mixed = type(cls.__name__, (_ContextRecord, cls), {"__module__": cls.__module__})
                _classes[cls] = mixed
    return mixed


def install(current: Callable[[], _Info | None]) -> None:
    """Wrap the current record factory so that records made inside a reconcile carry its
    fields; ``current`` tells the running reconcile. Idempotent: a second call does nothing
    while the wrapper is still the factory."""
    with _lock:
        factory = logging.getLogRecordFactory()
        if factory is _state["factory"]:
            return
        previous = factory

        def context_factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            info = current()
            if info is not None and _KEY not in record.__dict__:
                record.__dict__[_KEY] = info
                record.__class__ = _with_context(type(record))
            return record

        _state["factory"] = context_factory
        _state["previous"] = previous
        logging.setLogRecordFactory(context_factory)


def installed() -> bool:
    """Whether the wrapper is the current record factory."""
    return _state["factory"] is not None and logging.getLogRecordFactory() is _state["factory"]


def uninstall() -> None:
    """Put back the factory :func:`install` wrapped, if the wrapper is still in place."""
    with _lock:
        if _state["factory"] is not None and logging.getLogRecordFactory() is _state["factory"]:
            logging.setLogRecordFactory(_state["previous"])
        _state["factory"] = None
        _state["previous"] = None
