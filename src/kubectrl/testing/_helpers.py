"""Helpers for controller tests: :func:`eventually`, :func:`consistently` and :func:`run_manager`.

``eventually`` waits for a condition without a fixed sleep and, when it never holds, fails with
the last thing it saw; ``consistently`` checks that a condition holds on every poll for a whole
duration and fails at the first poll where it does not. ``run_manager`` runs a
:class:`~kubectrl.runtime.Manager` for the body of an ``async with``: started and synced on
entry, stopped (its errors raised) on exit. Built with a
:class:`~kubectrl.FakeClock` (``Manager(config, clock=clock)``), its requeues and backoff
wait on that clock, so a test moves time with ``clock.advance(30)`` instead of sleeping.

Neither imports the runtime: they work on anything with the Manager's ``start``/``stop``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import reprlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol, TypeVar, cast, overload

from kubectrl._internal.clock import Clock, FakeClock

__all__ = ["consistently", "eventually", "run_manager"]

T = TypeVar("T")
M = TypeVar("M", bound="_ManagerLike")

#: The default of :func:`eventually`'s ``timeout``, seconds.
DEFAULT_TIMEOUT = 5.0
#: The default of :func:`eventually`'s ``interval``, seconds.
DEFAULT_INTERVAL = 0.01
#: With a :class:`FakeClock`, the real pause between two tries (lets other tasks, the fake API's
#: watch streams and worker threads, make progress before the clock moves).
_FAKE_CLOCK_YIELD = 0.001

_repr = reprlib.Repr()
_repr.maxstring = 400
_repr.maxother = 400
_repr.maxdict = 20
_repr.maxlist = 20
_repr.maxlevel = 4


class _ManagerLike(Protocol):
    @property
    def caches_synced(self) -> bool: ...

    def is_leader(self) -> bool: ...

    async def start(self, *, handle_signals: bool = False) -> None: ...

    def stop(self) -> None: ...


@overload
async def eventually(
    predicate: Callable[[], Awaitable[T]],
    timeout: float = DEFAULT_TIMEOUT,
    *,
    interval: float = DEFAULT_INTERVAL,
    clock: Clock | None = None,
    describe: str | None = None,
) -> T: ...


@overload
async def eventually(
    predicate: Callable[[], T],
    timeout: float = DEFAULT_TIMEOUT,
    *,
    interval: float = DEFAULT_INTERVAL,
    clock: Clock | None = None,
    describe: str | None = None,
) -> T: ...


async def eventually(
    predicate: Callable[[], T | Awaitable[T]],
    timeout: float = DEFAULT_TIMEOUT,
    *,
    interval: float = DEFAULT_INTERVAL,
    clock: Clock | None = None,
    describe: str | None = None,
) -> T:
    """Call (and await, if it returns an awaitable) ``predicate`` until it returns something truthy.

    Returns that value. An exception from ``predicate`` (an ``assert`` inside it, a
    ``NotFoundError``) counts as "not yet" and is remembered. When ``timeout`` seconds pass
    without success, raises :class:`AssertionError` naming ``describe`` (default: the predicate's
    name) and showing the last value returned, or the last exception raised (also chained as
    ``__cause__``).

    ``timeout`` and ``interval`` are seconds of ``clock`` (default: the machine's). With a
    :class:`~kubectrl.FakeClock`, each failed try yields to the event loop for a moment
    and then *advances* the fake clock by ``interval``: timers due on it (a
    ``requeue_after``, a backoff) fire along the way, and the timeout is fake time. To check
    that something does *not* happen before a moment, advance the clock by hand instead.

    Example::

        >>> import asyncio
        >>> async def demo() -> int:
        ...     tries = []
        ...     def third_time() -> int:
        ...         tries.append(1)
        ...         return len(tries) if len(tries) >= 3 else 0
        ...     return await eventually(third_time, 1.0, interval=0.001)
        >>> asyncio.run(demo())
        3
        >>> async def never() -> None:
        ...     await eventually(lambda: {"ready": False}["ready"], 0.02, describe="ready")
        >>> asyncio.run(never())  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        AssertionError: eventually: ready still false after 0.02 s (... tries); last value: False
    """
    if timeout < 0:
        raise ValueError(f"eventually: timeout must be >= 0, got {timeout}")
    if interval <= 0:
        raise ValueError(f"eventually: interval must be > 0, got {interval}")
    what = describe or _name(predicate)
    fake = clock if isinstance(clock, FakeClock) else None
    now = clock.now if clock is not None else asyncio.get_running_loop().time
    deadline = now() + timeout
    tries = 0
    last_value: object = None
    last_error: BaseException | None = None
    while True:
        tries += 1
        try:
            result = predicate()
            if inspect.isawaitable(result):
                result = await result
        except Exception as err:  # "not yet"; reported on timeout
            last_error, last_value = err, None
        else:
            if result:
                return cast("T", result)
            last_error, last_value = None, result
        if now() >= deadline:
            break
        if fake is not None:
            await asyncio.sleep(_FAKE_CLOCK_YIELD)
            fake.advance(min(interval, max(deadline - fake.now(), 0.0)))
        elif clock is not None:
            await clock.sleep(min(interval, max(deadline - now(), 0.0)))
        else:
            await asyncio.sleep(min(interval, max(deadline - now(), 0.0)))
    if last_error is not None:
        message = (
            f"eventually: {what} still false after {timeout:g} s ({tries} tries); "
            f"last raised: {type(last_error).__name__}: {last_error}"
        )
        raise AssertionError(message) from last_error
    raise AssertionError(
        f"eventually: {what} still false after {timeout:g} s ({tries} tries); "
        f"last value: {_repr.repr(last_value)}"
    )


@contextlib.asynccontextmanager
async def run_manager(manager: M, *, timeout: float = 10.0) -> AsyncIterator[M]:
    """Run ``manager`` for the body of an ``async with``: started, synced and leading on entry.

    Entry returns once the manager's caches synced and its controllers were launched (with
    leader election: once it leads), waiting at most ``timeout`` real seconds; past that, it
    stops the manager and raises :class:`AssertionError` naming what was still missing (the
    informers not synced, with their last errors). A manager that fails to start raises its
    error. Exit stops it gracefully and raises what :meth:`~kubectrl.runtime.Manager.start`
    raised, if anything; an error from the body wins over the manager's, except one:

    **A FakeClock moved past the renew deadline at once.** A leader-elected manager whose
    :class:`~kubectrl.FakeClock` jumps by more than ``renew_deadline`` (10 s by default)
    in one ``advance`` sees its last lease renewal that old: to its elector that is a paused
    process, which must stop leading, so the manager stops with ``LeaderElectionLostError``
    and the body usually fails later, on an unrelated wait. Then ``run_manager`` raises an
    :class:`AssertionError` naming that trap (the manager's error as ``__cause__``). Move the
    clock in steps shorter than ``renew_deadline - retry_period``, with the manager running
    between them: ``eventually(..., clock=clock)`` and ``consistently(..., clock=clock)`` do.

    Example::

        clock = FakeClock()
        manager = Manager(api.config(), options=ManagerOptions(metrics_bind_address="0"),
                          clock=clock)
        Builder(manager).for_(("v1", "ConfigMap")).complete(reconcile)
        async with run_manager(manager):
            await api_client.create(config_map)
            await eventually(lambda: calls, describe="a reconcile")
    """
    task: asyncio.Task[None] = asyncio.ensure_future(manager.start())
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not (manager.caches_synced and manager.is_leader()):
            if task.done():
                task.result()  # raises the manager's error
                raise AssertionError("run_manager: the manager stopped before it was running")
            if loop.time() >= deadline:
                missing = "leadership" if manager.caches_synced else _unsynced(manager)
                raise AssertionError(
                    f"run_manager: still waiting for {missing} after {timeout:g} s ({manager!r})"
                )
            await asyncio.sleep(_FAKE_CLOCK_YIELD)
        yield manager
    except BaseException:
        # The body (or the wait) failed: stop, and let the body's error be the one reported,
        # unless the manager stopped first because a FakeClock jump cost it its lease.
        manager.stop()
        with contextlib.suppress(BaseException):
            await task
        trap = _clock_jump(manager, task)
        if trap is not None:
            raise trap from task.exception()
        raise
    manager.stop()
    try:
        await task
    except Exception as err:
        trap = _clock_jump(manager, task)
        if trap is not None:
            raise trap from err
        raise


def _clock_jump(manager: object, task: asyncio.Task[None]) -> AssertionError | None:
    """The error naming the trap, if ``task`` ended on a lease lost to a FakeClock jump."""
    if not task.done() or task.cancelled():
        return None
    error = task.exception()
    if error is None or not isinstance(getattr(manager, "clock", None), FakeClock):
        return None
    # Read duck-typed: the testing kit does not import the leader election layer.
    if type(error).__name__ != "LeaderElectionLostError" or "past renew_deadline" not in str(error):
        return None
    options = getattr(manager, "options", None)
    renew = getattr(options, "renew_deadline", "renew_deadline")
    retry = getattr(options, "retry_period", "retry_period")
    return AssertionError(
        "run_manager: the manager lost its leader election because its FakeClock moved past "
        f"the renew deadline ({renew} s) at once: to the elector a clock that jumps looks like "
        "a paused process, which must stop leading. Advance the FakeClock in steps shorter "
        f"than renew_deadline - retry_period ({renew} - {retry} s), letting the manager run "
        "between them (eventually(..., clock=clock) and consistently(..., clock=clock) do), "
        f"or test without leader election. The elector said: {error}"
    )


def _unsynced(manager: object) -> str:
    """What has not synced yet, with each informer's last error (read duck-typed)."""
    factory = getattr(manager, "informer_factory", None)
    informers = getattr(factory, "informers", {}) or {}
    waiting = []
    for key, informer in informers.items():
        if informer.has_synced():
            continue
        error = getattr(informer, "last_error", None)
        waiting.append(f"{key}" + (f" (last error: {error})" if error is not None else ""))
    if not waiting:
        return "its caches to sync"
    return "its caches to sync: " + "; ".join(waiting)


def _name(predicate: Callable[..., Any]) -> str:
    name = getattr(predicate, "__qualname__", None) or type(predicate).__name__
    return str(name)


#: The default of :func:`consistently`'s ``duration``, seconds (gomega's ``Consistently``).
DEFAULT_DURATION = 0.1


@overload
async def consistently(
    predicate: Callable[[], Awaitable[T]],
    duration: float = DEFAULT_DURATION,
    *,
    interval: float = DEFAULT_INTERVAL,
    clock: Clock | None = None,
    describe: str | None = None,
) -> T: ...


@overload
async def consistently(
    predicate: Callable[[], T],
    duration: float = DEFAULT_DURATION,
    *,
    interval: float = DEFAULT_INTERVAL,
    clock: Clock | None = None,
    describe: str | None = None,
) -> T: ...


async def consistently(
    predicate: Callable[[], T | Awaitable[T]],
    duration: float = DEFAULT_DURATION,
    *,
    interval: float = DEFAULT_INTERVAL,
    clock: Clock | None = None,
    describe: str | None = None,
) -> T:
    """Check that ``predicate`` holds (returns something truthy) on every try for ``duration``.

    gomega's ``Consistently``, beside :func:`eventually`: ``predicate`` is called (and awaited,
    if it returns an awaitable) at once, then every ``interval`` seconds until ``duration`` has
    passed, the last try at its end. The first try that returns something falsy, or raises,
    fails with :class:`AssertionError` naming ``describe`` (default: the predicate's name), when
    it happened and the value seen (an exception is shown and chained as ``__cause__``). Returns
    the last value once ``duration`` passed.

    ``duration`` and ``interval`` are seconds of ``clock`` (default: the machine's), as in
    :func:`eventually`: with a :class:`~kubectrl.FakeClock`, each try yields to the event
    loop for a moment and then *advances* the fake clock by ``interval``, so timers due on it fire
    along the way and a long ``duration`` takes no real time.

    Example::

        >>> import asyncio
        >>> async def demo() -> int:
        ...     calls = []
        ...     def stays_put() -> int:
        ...         calls.append(1)
        ...         return 3
        ...     return await consistently(stays_put, 0.02, interval=0.005)
        >>> asyncio.run(demo())
        3
        >>> async def flips() -> None:
        ...     values = iter([True, True, False])
        ...     await consistently(lambda: next(values), 1.0, interval=0.001, describe="ready")
        >>> asyncio.run(flips())  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        AssertionError: consistently: ready became false after ... s (try 3); value: False
    """
    if duration < 0:
        raise ValueError(f"consistently: duration must be >= 0, got {duration}")
    if interval <= 0:
        raise ValueError(f"consistently: interval must be > 0, got {interval}")
    what = describe or _name(predicate)
    fake = clock if isinstance(clock, FakeClock) else None
    now = clock.now if clock is not None else asyncio.get_running_loop().time
    start = now()
    deadline = start + duration
    tries = 0
    while True:
        tries += 1
        try:
            result = predicate()
            if inspect.isawaitable(result):
                result = await result
        except Exception as err:
            raise AssertionError(
                f"consistently: {what} raised after {now() - start:.3g} s (try {tries}): "
                f"{type(err).__name__}: {err}"
            ) from err
        if not result:
            raise AssertionError(
                f"consistently: {what} became false after {now() - start:.3g} s (try {tries}); "
                f"value: {_repr.repr(result)}"
            )
        if now() >= deadline:
            return cast("T", result)
        step = min(interval, max(deadline - now(), 0.0))
        if fake is not None:
            await asyncio.sleep(_FAKE_CLOCK_YIELD)
            fake.advance(step)
        elif clock is not None:
            await clock.sleep(step)
        else:
            await asyncio.sleep(step)
