"""Handlers per cause, per-object daemons and timers, on kubectrl's runtime: what a kopf user
reaches for, built on the same Manager, queue, cache, leader election, FakeAPI and FakeClock.

Example::

    from kubectrl.operator import Operator, TemporaryError

    operator = Operator(manager)

    @operator.on_create(("v1", "ConfigMap"))
    async def created(name, spec, patch, **_):
        patch["metadata"] = {"labels": {"handled": "yes"}}

See ``docs/operator.md``.
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl.operator._daemons import BlockingDaemonStopped, DaemonStopped
from kubectrl.operator._errors import (
    HandlerRetriesError,
    HandlerTimeoutError,
    PermanentError,
    TemporaryError,
)
from kubectrl.operator._kwargs import call_handler
from kubectrl.operator._operator import Index, Operator, adopt, register
from kubectrl.operator._state import DiffItem
from kubectrl.operator._watchers import KindKey, ObjectWatcher

__all__ = [
    "BlockingDaemonStopped",
    "DaemonStopped",
    "DiffItem",
    "HandlerRetriesError",
    "HandlerTimeoutError",
    "Index",
    "KindKey",
    "ObjectWatcher",
    "Operator",
    "PermanentError",
    "TemporaryError",
    "adopt",
    "call_handler",
    "register",
]

_publish(__name__, globals(), __all__)
