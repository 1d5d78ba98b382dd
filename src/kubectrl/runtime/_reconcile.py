"""What a reconciler is: ``Request`` in, ``Result`` (or an exception) out.

Level-based: a reconciler receives only a key, reads the current state
itself and makes the world match it. It is called again for every change and must be idempotent.
"""

from __future__ import annotations

import abc
import dataclasses
import datetime
import inspect
import math
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeAlias, runtime_checkable

from kubectrl.objects import ObjectKey

__all__ = [
    "MAX_REQUEUE_AFTER",
    "AsyncReconcileFunc",
    "ReconcileLike",
    "Reconciler",
    "ReconcilerProtocol",
    "Request",
    "Result",
    "SyncReconcileFunc",
    "TerminalError",
    "low_priority",
    "reconcile_func",
]


@dataclasses.dataclass(frozen=True, order=True)
class Request:
    """The key of the object to reconcile: ``namespace`` (``""`` if cluster-scoped) and ``name``.

    Hashable and immutable: it is the workqueue's key, so two events for one object collapse into
    one reconcile. ``str(request)`` is ``namespace/name``.

    Example::

        >>> str(Request("default", "web"))
        'default/web'
        >>> Request.from_key("web").namespace
        ''
    """

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @classmethod
    def from_key(cls, key: str) -> Request:
        """Parse ``"namespace/name"`` or ``"name"``."""
        namespace, name = ObjectKey.parse(key)
        return cls(namespace, name)

    @property
    def key(self) -> ObjectKey:
        """The same identity as an :class:`~kubectrl.objects.ObjectKey`."""
        return ObjectKey(self.namespace, self.name)


#: The longest ``requeue_after`` accepted, in seconds: Go's largest ``time.Duration``
#: (2**63 - 1 ns, about 292 years), so every delay a controller-runtime reconciler can ask for
#: is accepted and nothing a timer cannot represent gets through.
MAX_REQUEUE_AFTER: float = (2**63 - 1) / 1e9


@dataclasses.dataclass(frozen=True)
class Result:
    """How a successful reconcile wants to be called again.

    - ``Result()`` (or returning ``None``): done; the key's backoff is reset.
    - ``Result(requeue_after=30)``: reconcile again in 30 s (seconds, or a ``timedelta``).
    - ``Result(requeue=True)``: reconcile again after the rate limiter's backoff.

    ``priority`` (an ``int``, controller-runtime's ``Result.Priority``) is the priority the
    requeue is queued with in the controller's priority queue (higher first; ``None``: the
    default, 0); it needs ``requeue`` or ``requeue_after``.

    ``requeue_after`` wins over ``requeue`` when both are set, as in controller-runtime. It must be
    a finite number of seconds between 0 and :data:`MAX_REQUEUE_AFTER` (``ValueError`` naming the
    value otherwise: a ``nan`` or ``inf`` would silently never requeue, or crash the timer later,
    far from the reconcile that returned it); a non-number raises ``TypeError``.

    Example::

        >>> import datetime
        >>> Result(requeue_after=datetime.timedelta(minutes=1)).requeue_after
        60.0
    """

    requeue: bool = False
    requeue_after: float = 0.0
    priority: int | None = None

    def __init__(
        self,
        *,
        requeue: bool = False,
        requeue_after: float | datetime.timedelta = 0.0,
        priority: int | None = None,
    ):
        object.__setattr__(self, "requeue", bool(requeue))
        object.__setattr__(self, "requeue_after", _requeue_seconds(requeue_after))
        if priority is not None and (not isinstance(priority, int) or isinstance(priority, bool)):
            raise TypeError(f"Result: priority must be an int or None, got {priority!r}")
        object.__setattr__(self, "priority", priority)

    def is_zero(self) -> bool:
        """True for the "done, nothing more" result."""
        return not self.requeue and self.requeue_after == 0


def low_priority(enqueue: Callable[[Request], None]) -> Callable[[Request], None]:
    """The variant of a source's ``enqueue`` for events that changed nothing (an object of the
    initial list, a resync): the controller's queues them at
    :data:`~kubectrl.workqueue.LOW_PRIORITY`; any other ``enqueue`` is returned as is."""
    variant = getattr(enqueue, "low_priority", None)
    return variant if callable(variant) else enqueue


def _requeue_seconds(value: object) -> float:
    if isinstance(value, datetime.timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    else:
        raise TypeError(
            f"Result: requeue_after must be seconds (a number) or a timedelta, got {value!r}"
        )
    if not math.isfinite(seconds) or not 0 <= seconds <= MAX_REQUEUE_AFTER:
        raise ValueError(
            f"Result: requeue_after must be a finite number of seconds, >= 0 and <= "
            f"{MAX_REQUEUE_AFTER:.0f}, got {seconds!r}"
        )
    return seconds


class TerminalError(Exception):
    """An error that retrying will not fix: record it and do not requeue.

    The controller counts it (``controller_runtime_terminal_reconcile_errors_total`` and
    ``..._reconcile_errors_total``), logs it and does not requeue the key; as in
    controller-runtime, the key's backoff history is kept (not forgotten). The key comes back
    only with the next change to the object. Wrap another error with ``raise TerminalError(err)``
    or ``raise TerminalError("...") from err``.

    Example::

        if not foo["spec"].get("deploymentName"):
            raise TerminalError("spec.deploymentName is empty")
    """


@runtime_checkable
class ReconcilerProtocol(Protocol):
    """Anything with a ``reconcile(request)`` method, sync or async."""

    def reconcile(self, request: Request) -> Any:
        """Reconcile one key; return a :class:`Result`, ``None`` or an awaitable of either."""
        ...


class Reconciler(abc.ABC):
    """Base class for reconcilers: subclass it and implement ``reconcile``.

    ``reconcile`` may be ``async def`` (runs on the event loop; never block in it) or a plain
    ``def`` (runs in a daemon thread the controller starts per reconcile, so blocking clients are
    fine). It returns a :class:`Result` or ``None``; raising requeues the key with backoff,
    raising :class:`TerminalError` does not.

    Guarantees (from the controller): one key is never reconciled by two workers at once, and a
    change that arrives during a reconcile causes one more reconcile afterwards. Caveats: the
    same key may be reconciled more often than it changed; be idempotent.

    Example::

        class FooReconciler(Reconciler):
            async def reconcile(self, request: Request) -> Result | None:
                foo = await client.get(("example.com/v1", "Foo"), request.name,
                                       namespace=request.namespace)
                ...
                return Result(requeue_after=300)
    """

    @abc.abstractmethod
    def reconcile(self, request: Request) -> Any:
        """Make the object named by ``request`` match its desired state."""


AsyncReconcileFunc: TypeAlias = Callable[[Request], Awaitable["Result | None"]]
SyncReconcileFunc: TypeAlias = Callable[[Request], "Result | None"]
#: What a controller accepts: a :class:`Reconciler` (or anything with ``reconcile``), or a plain
#: function taking a :class:`Request`, sync or async.
ReconcileLike: TypeAlias = "ReconcilerProtocol | AsyncReconcileFunc | SyncReconcileFunc"


class _FuncReconciler(Reconciler):
    def __init__(self, func: Callable[[Request], Any]) -> None:
        self._func = func
        self.__wrapped__ = func

    def reconcile(self, request: Request) -> Any:
        return self._func(request)

    def __repr__(self) -> str:
        return f"reconcile_func({getattr(self._func, '__qualname__', self._func)!r})"


def reconcile_func(func: Callable[[Request], Any]) -> Reconciler:
    """Make a :class:`Reconciler` from a plain function (controller-runtime's ``reconcile.Func``).

    Controllers also accept the bare function; this is for places that want a ``Reconciler``.

    Example::

        @reconcile_func
        async def reconcile(request: Request) -> Result | None:
            return None
    """
    return _FuncReconciler(func)


def resolve_reconcile(reconciler: ReconcileLike) -> tuple[Callable[[Request], Any], bool]:
    """The callable to invoke and whether it is a coroutine function (else: run in a thread)."""
    method = getattr(reconciler, "reconcile", None)
    func: Callable[[Request], Any]
    if method is not None and callable(method):
        func = method
        target: Any = reconciler._func if isinstance(reconciler, _FuncReconciler) else method
    elif callable(reconciler):
        func = reconciler
        target = reconciler
    else:
        raise TypeError(
            f"a reconciler must have a reconcile(request) method or be callable, got {reconciler!r}"
        )
    is_async = inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(
        getattr(target, "__call__", None)  # noqa: B004 - async __call__ on an object
    )
    return func, is_async
