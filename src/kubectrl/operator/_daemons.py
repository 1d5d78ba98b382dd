"""Per-object daemons and timers: what kopf's ``@kopf.daemon`` and ``@kopf.timer`` do, on kubectrl.

:class:`Daemons` is an :class:`~kubectrl.operator._watchers.ObjectWatcher`: the operator's
dispatcher calls :meth:`Daemons.seen` each time it reconciles an object that exists, and
:meth:`Daemons.gone` while the object is being deleted. From those calls alone it keeps, for
every object and every registered daemon or timer whose filters match, exactly one asyncio task:

- a **daemon** calls its function once and lets it run as long as it wants; when the function
  raises, it is called again after a delay (``TemporaryError.delay``, else ``backoff``), with
  ``retry`` counting up; a :class:`PermanentError`, ``retries`` or ``timeout`` running out, or a
  normal return ends it for the rest of the object's life in this process (as in kopf);
- a **timer** calls its function every ``interval`` seconds (``sharp``: on a fixed grid),
  after ``initial_delay``, and with ``idle`` only once the object's ``resourceVersion`` has not
  changed for that many seconds. It is its own loop on the operator's clock, so reconciles of
  the object (changes, resyncs) do not re-run it.

Stopping (``gone``, a filter that stops matching, or :meth:`Daemons.stop` when the operator
stops or loses leadership) goes through kopf's three stages (``docs/daemons.rst``,
Termination): the function's ``stopped`` flag is set and ``cancellation_backoff`` seconds of the
clock are given to it; then, only with a ``cancellation_timeout``, the task is cancelled and
given that many seconds more, after which it is abandoned (logged; it stays in
:meth:`Daemons.running`); with no ``cancellation_timeout`` it is waited for until it returns.
``gone`` answers ``True`` once every task of the object has finished or been abandoned, so a
finalizer held for ``requires_finalizer=True`` is released after that. Every sleep is on
``operator.clock``, so a :class:`~kubectrl.FakeClock` drives it all in tests.

Semantics follow kopf's ``kopf/_core/engines/daemons.py`` and ``docs/daemons.rst`` /
``docs/timers.rst`` (read for behaviour; the code is kubectrl's own).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import datetime
import inspect
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Protocol, TypeVar

from kubectrl._internal.clock import Clock
from kubectrl.objects import ObjectKey
from kubectrl.operator._errors import (
    HandlerRetriesError,
    HandlerTimeoutError,
    PermanentError,
    TemporaryError,
)
from kubectrl.operator._filters import MetaFilter, check_meta_filter, meta_matches
from kubectrl.operator._kwargs import _accepted
from kubectrl.operator._watchers import KindKey

__all__ = [
    "BlockingDaemonStopped",
    "DaemonStopped",
    "Daemons",
    "HandlerRetriesError",
    "HandlerTimeoutError",
    "PermanentError",
    "TemporaryError",
]

F = TypeVar("F", bound=Callable[..., Any])

_log = logging.getLogger("kubectrl.operator.daemons")

#: Zero-time event-loop cycles ``gone`` gives stopped tasks to finish before answering.
_INSTANT_EXIT_CYCLES = 10
#: kopf's default delay before a failed daemon or timer is called again, seconds.
DEFAULT_BACKOFF = 60.0


# --- The stop flag handed to daemons -------------------------------------------------------------


class _Stopper:
    """The one flag behind a run's ``stopped``: set from the event loop, read from anywhere."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.reason: str | None = None
        self._event = asyncio.Event()
        self._lock = threading.Lock()
        self._waits: set[threading.Event] = set()

    def is_set(self) -> bool:
        return self.reason is not None

    def set(self, reason: str) -> None:
        if self.reason is not None:
            return
        with self._lock:
            self.reason = reason
            waits = list(self._waits)
        self._event.set()
        for event in waits:
            event.set()

    async def sleep(self, seconds: float | None) -> bool:
        """Sleep ``seconds`` of the clock (``None``: until set); ``True`` if set meanwhile."""
        if self.is_set():
            return True
        waiter = asyncio.ensure_future(self._event.wait())
        tasks: set[asyncio.Future[Any]] = {waiter}
        if seconds is not None:
            tasks.add(asyncio.ensure_future(self.clock.sleep(seconds)))
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
        return self.is_set()

    def wait_blocking(self, timeout: float | None) -> bool:
        event = threading.Event()
        with self._lock:
            if self.reason is not None:
                return True
            self._waits.add(event)
        try:
            # The clock's own blocking wait (both kubectrl clocks have one: a FakeClock wakes
            # the thread when moved past the deadline); else the machine's time.
            wait_blocking = getattr(self.clock, "wait_blocking", None)
            if wait_blocking is not None:
                wait_blocking(event, timeout)
            else:
                event.wait(None if timeout is None else max(0.0, timeout))
        finally:
            with self._lock:
                self._waits.discard(event)
        return self.is_set()


class _StoppedFlag:
    """What both ``stopped`` arguments share: the flag, its truth value and its reason."""

    def __init__(self, stopper: _Stopper) -> None:
        self._stopper = stopper

    def is_set(self) -> bool:
        """Whether the daemon was asked to stop."""
        return self._stopper.is_set()

    def __bool__(self) -> bool:
        return self._stopper.is_set()

    @property
    def reason(self) -> str | None:
        """Why it was asked to stop, or ``None``."""
        return self._stopper.reason

    def __repr__(self) -> str:
        return f"{type(self).__name__}(reason={self.reason!r})"


class DaemonStopped(_StoppedFlag):
    """The ``stopped`` argument of an ``async def`` daemon or timer: true once it should stop.

    ``reason`` says why (``"deleted"``, ``"filters no longer match"``, ``"operator stopping"``).

    Example::

        @operator.daemon(("example.com/v1", "Monitor"))
        async def monitor(stopped: DaemonStopped, spec: Mapping[str, Any], **_: Any) -> None:
            while not stopped:
                ...  # check something
                await stopped.wait(10)  # 10 s of the operator's clock, or less if stopped
    """

    async def wait(self, timeout: float | None = None) -> bool:
        """Wait until asked to stop or ``timeout`` seconds of the clock pass; ``is_set()``."""
        return await self._stopper.sleep(timeout)


class BlockingDaemonStopped(_StoppedFlag):
    """The ``stopped`` argument of a ``def`` daemon or timer (it runs in its own thread).

    Same as :class:`DaemonStopped`, but :meth:`wait` blocks the thread. A ``def`` daemon cannot
    be cancelled: it must return once ``stopped`` is set.

    Example::

        @operator.daemon(("example.com/v1", "Monitor"))
        def monitor(stopped: BlockingDaemonStopped, **_: Any) -> None:
            while not stopped:
                stopped.wait(10)
    """

    def wait(self, timeout: float | None = None) -> bool:
        """Block until asked to stop or ``timeout`` seconds of the clock pass; ``is_set()``."""
        return self._stopper.wait_blocking(timeout)


# --- Calling functions kopf-style (which keywords: kubectrl.operator._kwargs) -------------------


def _is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn)


async def _call(fn: Callable[..., Any], **kwargs: Any) -> Any:
    """Call ``fn`` with the keyword arguments it accepts; a ``def`` runs in a thread of its own.

    Not ``asyncio.to_thread``: a ``def`` daemon may run for the object's whole life, and the
    loop's default executor has a handful of threads (``min(32, cpus + 4)``) that every other
    ``def`` handler and ``to_thread`` call of the process shares.

    A thread cannot be cancelled: when the calling task is, this waits for the thread to return
    (the function was told through ``stopped``) and then lets the cancellation through.
    """
    accepted = _accepted(fn, kwargs)
    if _is_async(fn):
        return await fn(**accepted)
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if done.done():
            return
        if ok:
            done.set_result(value)
        else:
            done.set_exception(value)

    def body() -> None:
        try:
            value = fn(**accepted)
        except BaseException as err:  # handed to the awaiting task
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits
                loop.call_soon_threadsafe(settle, False, err)
        else:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(settle, True, value)

    name = getattr(fn, "__qualname__", repr(fn))
    context = contextvars.copy_context()
    thread = threading.Thread(
        target=context.run, args=(body,), name=f"kubectrl-daemon-{name}", daemon=True
    )
    thread.start()
    cancelled = False
    while True:
        try:
            result = await asyncio.shield(done)
        except asyncio.CancelledError:
            if done.done():
                raise
            cancelled = True  # keep waiting for the thread
            continue
        if cancelled:
            raise asyncio.CancelledError
        return result


# --- Registration --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Spec:
    """One registered daemon or timer."""

    kind: KindKey
    fn: Callable[..., Any]
    id: str
    is_timer: bool
    interval: float | None
    idle: float | None
    sharp: bool
    initial_delay: float | Callable[..., float] | None
    labels: MetaFilter | None
    annotations: MetaFilter | None
    when: Callable[..., bool] | None
    requires_finalizer: bool
    cancellation_backoff: float | None
    cancellation_timeout: float | None
    backoff: float
    retries: int | None
    timeout: float | None

    @property
    def what(self) -> str:
        return f"{'timer' if self.is_timer else 'daemon'} {self.id!r}"


def _check_seconds(owner: str, name: str, value: object, *, positive: bool = False) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{owner}: {name} must be a number of seconds, got {value!r}")
    if value < 0 or (positive and value == 0):
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"{owner}: {name} must be {bound}, got {value!r}")


def _check_kind(owner: str, kind: object) -> KindKey:
    if (
        not isinstance(kind, tuple)
        or len(kind) != 2
        or not all(isinstance(part, str) and part for part in kind)
    ):
        raise TypeError(f"{owner}: kind must be an (apiVersion, kind) tuple, got {kind!r}")
    return (kind[0], kind[1])


def _owned(owner: str, check: Callable[[str, object], Any], name: str, value: object) -> Any:
    """``check(name, value)``, its ``TypeError`` naming ``owner`` (``Daemons.daemon: ...``)."""
    try:
        return check(name, value)
    except TypeError as err:
        raise TypeError(f"{owner}: {err}") from None


# --- Per-object state ----------------------------------------------------------------------------


class _Live(Mapping[str, Any]):
    """A read-only live view of one field of the object's latest body (kopf's live views)."""

    def __init__(self, body: dict[str, Any], field_name: str) -> None:
        self._body = body
        self._field = field_name

    def _target(self) -> Mapping[str, Any]:
        value = self._body.get(self._field)
        return value if isinstance(value, Mapping) else {}

    def __getitem__(self, key: str) -> Any:
        return self._target()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._target())

    def __len__(self) -> int:
        return len(self._target())

    def __repr__(self) -> str:
        return repr(dict(self._target()))


@dataclass
class _Run:
    spec: _Spec
    stopper: _Stopper
    task: asyncio.Task[None] | None = None
    stopping: asyncio.Task[None] | None = None


@dataclass
class _Object:
    kind: KindKey
    key: ObjectKey
    uid: str
    body: dict[str, Any]
    resource_version: str
    changed_at: float
    memo: SimpleNamespace = field(default_factory=SimpleNamespace)
    runs: dict[str, _Run] = field(default_factory=dict)
    #: Ids that ended for this object's life here (returned, permanent error, out of retries).
    finished: set[str] = field(default_factory=set)
    #: ``gone`` was called: forget the object once its last run ended.
    deleted: bool = False

    @property
    def ident(self) -> tuple[KindKey, ObjectKey]:
        return (self.kind, self.key)


class _OperatorLike(Protocol):
    @property
    def clock(self) -> Clock: ...

    @property
    def client(self) -> Any: ...

    @property
    def name(self) -> str: ...

    def memo_for(self, kind: KindKey, key: ObjectKey) -> SimpleNamespace: ...

    def indexes(self) -> Mapping[str, Any]: ...


class _ObjectLogger(logging.LoggerAdapter):  # type: ignore[type-arg]
    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        extra = self.extra or {}
        kwargs.setdefault("extra", {}).update(extra)
        return f"[{extra.get('object')}] {msg}", kwargs


# --- Daemons -------------------------------------------------------------------------------------


class Daemons:
    """Per-object daemons and timers for an operator (an ``ObjectWatcher``).

    ``operator`` provides ``clock`` (every wait is on it), ``client`` (patches returned by the
    functions are written through it) and ``name``. Register functions with :meth:`daemon` and
    :meth:`timer` before the operator starts; the operator's dispatcher then calls
    :meth:`seen`, :meth:`gone` and :meth:`stop`.

    Example::

        daemons = Daemons(operator)

        @daemons.daemon(("example.com/v1", "Monitor"), cancellation_timeout=5)
        async def watch(stopped: DaemonStopped, name: str, **_: Any) -> None:
            while not stopped:
                await stopped.wait(10)

        @daemons.timer(("example.com/v1", "Monitor"), interval=60, idle=30)
        def ping(spec: Mapping[str, Any], patch: dict[str, Any], **_: Any) -> None:
            patch.setdefault("status", {})["pinged"] = True
    """

    def __init__(self, operator: _OperatorLike) -> None:
        self._operator = operator
        self._specs: dict[KindKey, dict[str, _Spec]] = {}
        self._objects: dict[tuple[KindKey, ObjectKey], _Object] = {}
        #: Tasks still running after their cancellation timeout, given up on (stage 3a).
        self._abandoned: set[asyncio.Future[Any]] = set()
        self._stopped = False

    # -- registration

    def daemon(
        self,
        kind: KindKey,
        *,
        id: str | None = None,
        initial_delay: float | Callable[..., float] | None = None,
        labels: MetaFilter | None = None,
        annotations: MetaFilter | None = None,
        when: Callable[..., bool] | None = None,
        requires_finalizer: bool = False,
        cancellation_backoff: float | None = None,
        cancellation_timeout: float | None = None,
        backoff: float = DEFAULT_BACKOFF,
        retries: int | None = None,
        timeout: float | None = None,
    ) -> Callable[[F], F]:
        """Run the decorated function for every object of ``kind`` that matches the filters.

        ``labels``/``annotations``: each value a string (equal), ``True`` (present), ``False``
        (absent) or a callable of the value (``None`` if absent). ``when``: a callable of the
        handler arguments. ``initial_delay``: seconds (or a callable of the handler arguments
        returning them) before the first call. ``backoff``: seconds before calling again after
        an error (``TemporaryError.delay`` wins). ``retries``/``timeout``: give up after that many
        failures / seconds since the first call. ``cancellation_backoff``: seconds given to the
        function after ``stopped`` is set; ``cancellation_timeout``: then cancel the task and give
        it that many seconds more before abandoning it (``None``: never cancel, wait for it), as
        kopf's options of the same names.
        ``requires_finalizer``: hold the object's deletion until the daemon has stopped.
        """
        return self._register(
            kind,
            "daemon",
            id=id,
            is_timer=False,
            interval=None,
            idle=None,
            sharp=False,
            initial_delay=initial_delay,
            labels=labels,
            annotations=annotations,
            when=when,
            requires_finalizer=requires_finalizer,
            cancellation_backoff=cancellation_backoff,
            cancellation_timeout=cancellation_timeout,
            backoff=backoff,
            retries=retries,
            timeout=timeout,
        )

    def timer(
        self,
        kind: KindKey,
        *,
        interval: float,
        id: str | None = None,
        idle: float | None = None,
        sharp: bool = False,
        initial_delay: float | Callable[..., float] | None = None,
        labels: MetaFilter | None = None,
        annotations: MetaFilter | None = None,
        when: Callable[..., bool] | None = None,
        requires_finalizer: bool = False,
        cancellation_backoff: float | None = None,
        cancellation_timeout: float | None = None,
        backoff: float = DEFAULT_BACKOFF,
        retries: int | None = None,
        timeout: float | None = None,
    ) -> Callable[[F], F]:
        """Call the decorated function every ``interval`` seconds for every matching object.

        ``sharp``: on a grid of ``interval`` from the first call, however long each call takes
        (otherwise ``interval`` after each call returns). ``idle``: only once the object has not
        changed (its ``resourceVersion``) for that many seconds; a change puts the timer back to
        waiting. ``initial_delay``, the filters and the error options as in :meth:`daemon`;
        after an error the timer waits its backoff instead of ``interval``.
        """
        return self._register(
            kind,
            "timer",
            id=id,
            is_timer=True,
            interval=interval,
            idle=idle,
            sharp=sharp,
            initial_delay=initial_delay,
            labels=labels,
            annotations=annotations,
            when=when,
            requires_finalizer=requires_finalizer,
            cancellation_backoff=cancellation_backoff,
            cancellation_timeout=cancellation_timeout,
            backoff=backoff,
            retries=retries,
            timeout=timeout,
        )

    def _register(self, kind: object, verb: str, **options: Any) -> Callable[[F], F]:
        owner = f"Daemons.{verb}"
        kind_key = _check_kind(owner, kind)
        _check_seconds(owner, "interval", options["interval"], positive=True)
        _check_seconds(owner, "idle", options["idle"])
        if not callable(options["initial_delay"]):
            _check_seconds(owner, "initial_delay", options["initial_delay"])
        _check_seconds(owner, "cancellation_backoff", options["cancellation_backoff"])
        _check_seconds(owner, "cancellation_timeout", options["cancellation_timeout"])
        _check_seconds(owner, "backoff", options["backoff"])
        _check_seconds(owner, "timeout", options["timeout"], positive=True)
        retries = options["retries"]
        if retries is not None and (
            isinstance(retries, bool) or not isinstance(retries, int) or retries < 0
        ):
            raise ValueError(f"{owner}: retries must be an int >= 0 or None, got {retries!r}")
        if options["when"] is not None and not callable(options["when"]):
            raise TypeError(f"{owner}: when must be a callable, got {options['when']!r}")
        labels = _owned(owner, check_meta_filter, "labels", options.pop("labels"))
        annotations = _owned(owner, check_meta_filter, "annotations", options.pop("annotations"))
        given_id = options.pop("id")

        def decorate(fn: F) -> F:
            if not callable(fn):
                raise TypeError(f"{owner}({kind_key!r}): {fn!r} is not callable")
            spec_id = given_id or getattr(fn, "__qualname__", None) or repr(fn)
            kind_specs = self._specs.setdefault(kind_key, {})
            if spec_id in kind_specs:
                raise ValueError(
                    f"{owner}({kind_key!r}): a daemon or timer with id {spec_id!r} is already "
                    "registered for this kind; pass id=... to tell them apart"
                )
            kind_specs[spec_id] = _Spec(
                kind=kind_key,
                fn=fn,
                id=spec_id,
                labels=labels,
                annotations=annotations,
                **options,
            )
            return fn

        return decorate

    # -- the ObjectWatcher protocol

    def kinds(self) -> set[KindKey]:
        """The kinds that have a daemon or timer."""
        return set(self._specs)

    def needs_finalizer(self, kind: KindKey, obj: Mapping[str, Any]) -> bool:
        """Whether a ``requires_finalizer=True`` daemon or timer matches or runs for ``obj``."""
        state = self._objects.get((kind, _key_of(obj)))
        for spec in self._specs.get(kind, {}).values():
            if not spec.requires_finalizer:
                continue
            if state is not None and spec.id in state.runs:
                return True
            if meta_matches(spec.labels, _meta_map(obj, "labels")) and meta_matches(
                spec.annotations, _meta_map(obj, "annotations")
            ):
                return True
        return False

    async def seen(self, kind: KindKey, obj: Mapping[str, Any]) -> None:
        """Start what matches ``obj`` and is not running; stop what no longer matches."""
        specs = self._specs.get(kind)
        if not specs:
            return
        key = _key_of(obj)
        if self._stopped:
            _log.debug("daemons of %r stopped: not starting any for %s", self._operator.name, key)
            return
        metadata = obj.get("metadata") or {}
        uid = str(metadata.get("uid") or "")
        resource_version = str(metadata.get("resourceVersion") or "")
        state = self._objects.get((kind, key))
        if state is not None and uid and state.uid and uid != state.uid:
            # The same name, another object: what followed the old one must end first.
            await self._stop_object(state, "replaced by a new object with the same name")
            state = None
        now = self._operator.clock.now()
        if state is None:
            state = _Object(kind, key, uid, dict(obj), resource_version, now)
            # the memo the object's handlers get too, as in kopf
            state.memo = self._operator.memo_for(kind, key)
            self._objects[(kind, key)] = state
        else:
            state.body.clear()
            state.body.update(obj)  # live: running functions see the latest body
            if resource_version != state.resource_version:
                state.resource_version = resource_version
                state.changed_at = now
        for spec in specs.values():
            matches = self._matches(spec, state)
            run = state.runs.get(spec.id)
            if run is not None:
                if not matches and run.stopping is None:
                    run.stopping = asyncio.ensure_future(
                        self._stop_run(state, run, "filters no longer match")
                    )
            elif matches and spec.id not in state.finished:
                self._spawn(state, spec)

    async def gone(self, kind: KindKey, key: ObjectKey, obj: Mapping[str, Any] | None) -> bool:
        """Stop everything that follows ``key``; ``True`` once all of it has finished."""
        state = self._objects.get((kind, key))
        if state is None:
            return True
        state.deleted = True
        for run in list(state.runs.values()):
            if run.stopping is None:
                run.stopping = asyncio.ensure_future(self._stop_run(state, run, "deleted"))
        for _ in range(_INSTANT_EXIT_CYCLES):
            if not state.runs:
                break
            await asyncio.sleep(0)
        if state.runs:
            return False
        if self._objects.get((kind, key)) is state:
            del self._objects[(kind, key)]
        return True

    async def stop(self) -> None:
        """Stop every daemon and timer for good; returns once none is running."""
        self._stopped = True
        await asyncio.gather(
            *(self._stop_object(state, "operator stopping") for state in self._objects.values())
        )
        self._objects.clear()

    def running(self) -> list[asyncio.Task[None]]:
        """The daemon and timer tasks still alive, abandoned ones included (empty after
        :meth:`stop` returned, unless a function outlived its ``cancellation_timeout``)."""
        alive = {
            run.task
            for state in self._objects.values()
            for run in state.runs.values()
            if run.task is not None and not run.task.done()
        }
        alive.update(task for task in self._abandoned if not task.done())  # type: ignore[misc]
        return list(alive)

    # -- internals

    def _matches(self, spec: _Spec, state: _Object) -> bool:
        if not meta_matches(spec.labels, _meta_map(state.body, "labels")):
            return False
        if not meta_matches(spec.annotations, _meta_map(state.body, "annotations")):
            return False
        if spec.when is None:
            return True
        try:
            return bool(spec.when(**_accepted(spec.when, self._kwargs(state))))
        except Exception as err:
            _log.error(
                "%s: its when= filter raised for %s %s: %r; not running it",
                spec.what,
                spec.kind[1],
                state.key,
                err,
                extra={"handler": spec.id, "object": str(state.key), "error": repr(err)},
            )
            return False

    def _spawn(self, state: _Object, spec: _Spec) -> None:
        run = _Run(spec, _Stopper(self._operator.clock))
        state.runs[spec.id] = run
        loop_fn = self._timer_loop if spec.is_timer else self._daemon_loop
        run.task = asyncio.ensure_future(loop_fn(state, run))
        run.task.set_name(f"{spec.what} {spec.kind[1]} {state.key}")

        def forget(task: asyncio.Task[None]) -> None:
            if state.runs.get(spec.id) is run:
                del state.runs[spec.id]
            if run.stopper.reason is None:  # ended on its own: not again for this object
                state.finished.add(spec.id)
            # Deleted without a finalizer, nobody may ask ``gone`` again: forget it now.
            if state.deleted and not state.runs and self._objects.get(state.ident) is state:
                del self._objects[state.ident]

        run.task.add_done_callback(forget)

    async def _stop_object(self, state: _Object, reason: str) -> None:
        runs = list(state.runs.values())
        for run in runs:
            if run.stopping is None:
                run.stopping = asyncio.ensure_future(self._stop_run(state, run, reason))
        await asyncio.gather(*(run.stopping for run in runs if run.stopping is not None))

    async def _stop_run(self, state: _Object, run: _Run, reason: str) -> None:
        task = run.task
        run.stopper.set(reason)
        if task is None or task.done():
            return
        spec = run.spec
        if spec.cancellation_backoff:  # 1. graceful: the flag is set, give it this long
            await self._within(task, spec.cancellation_backoff)
        if task.done():
            return
        if spec.cancellation_timeout is None:  # 3b. no forced stage: wait for it to return
            await asyncio.wait({task})
            return
        extra = {"handler": spec.id, "object": str(state.key), "reason": reason}
        _log.warning(  # 2. forced
            "%s for %s %s did not stop within %g s of being asked (%s): cancelling it",
            spec.what,
            spec.kind[1],
            state.key,
            spec.cancellation_backoff or 0,
            reason,
            extra=extra,
        )
        task.cancel()
        await self._within(task, spec.cancellation_timeout)
        if not task.done():  # 3a. abandoned: the object is released all the same
            self._abandoned.add(task)
            task.add_done_callback(self._abandoned.discard)
            if state.runs.get(spec.id) is run:
                del state.runs[spec.id]
            _log.warning(
                "%s for %s %s is still running %g s after it was cancelled: abandoned (it may "
                "leak what it holds)",
                spec.what,
                spec.kind[1],
                state.key,
                spec.cancellation_timeout,
                extra=extra,
            )

    async def _within(self, task: asyncio.Future[Any], seconds: float) -> None:
        """Wait for ``task`` at most ``seconds`` of the operator's clock."""
        deadline = asyncio.ensure_future(self._operator.clock.sleep(seconds))
        try:
            await asyncio.wait({task, deadline}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            deadline.cancel()

    def _kwargs(self, state: _Object) -> dict[str, Any]:
        body = state.body
        metadata = body.get("metadata") or {}
        return {
            "body": body,
            "spec": _Live(body, "spec"),
            "meta": _Live(body, "metadata"),
            "status": _Live(body, "status"),
            "name": state.key.name,
            "namespace": state.key.namespace or None,
            "uid": metadata.get("uid"),
            "labels": _LiveMeta(body, "labels"),
            "annotations": _LiveMeta(body, "annotations"),
            "logger": _ObjectLogger(_log, {"object": str(state.key), "kind": state.kind[1]}),
            "memo": state.memo,
        }

    def _call_kwargs(
        self, state: _Object, run: _Run, *, retry: int, started: float, patch: dict[str, Any]
    ) -> dict[str, Any]:
        clock = self._operator.clock
        stopped: DaemonStopped | BlockingDaemonStopped = (
            DaemonStopped(run.stopper)
            if _is_async(run.spec.fn)
            else BlockingDaemonStopped(run.stopper)
        )
        runtime = datetime.timedelta(seconds=clock.now() - started)
        return {
            **self._operator.indexes(),  # by name, as the handlers get them (kopf's indexes)
            **self._kwargs(state),
            "patch": patch,
            "retry": retry,
            "started": clock.wall() - runtime,
            "runtime": runtime,
            "stopped": stopped,
        }

    async def _initial_delay(self, state: _Object, run: _Run) -> bool:
        """Sleep the initial delay; ``True`` if asked to stop meanwhile."""
        delay = run.spec.initial_delay
        if callable(delay):
            delay = float(delay(**_accepted(delay, self._kwargs(state))))
        if delay:
            return await run.stopper.sleep(delay)
        return run.stopper.is_set()

    async def _attempt(
        self, state: _Object, run: _Run, *, retry: int, started: float
    ) -> float | None:
        """Call the function once and write its patch. ``None`` on success, else the delay
        before the next attempt. Raises :class:`PermanentError` when it must not run again."""
        spec = run.spec
        patch: dict[str, Any] = {}
        failure: BaseException | None = None
        delay: float | None = None
        try:
            result = await _call(
                spec.fn, **self._call_kwargs(state, run, retry=retry, started=started, patch=patch)
            )
        except PermanentError as err:
            failure = err
        except TemporaryError as err:
            failure, delay = err, err.delay
        except Exception as err:
            failure, delay = err, spec.backoff
        else:
            if result is not None:
                patch.setdefault("status", {})[spec.id] = result
        if patch:
            await self._write_patch(state, spec, patch)
        if failure is None:
            return None
        clock = self._operator.clock
        if delay is not None and spec.retries is not None and retry + 1 > spec.retries:
            failure = HandlerRetriesError(
                f"{spec.what} failed {retry + 1} times (retries={spec.retries}): {failure!r}"
            )
            delay = None
        elif (
            delay is not None
            and spec.timeout is not None
            and clock.now() + delay - started > spec.timeout
        ):
            failure = HandlerTimeoutError(
                f"{spec.what} still failing after {clock.now() - started:g} s "
                f"(timeout={spec.timeout:g}): {failure!r}"
            )
            delay = None
        if delay is None:
            _log.error(
                "%s for %s %s failed for good: %s",
                spec.what,
                spec.kind[1],
                state.key,
                failure,
                extra={
                    "handler": spec.id,
                    "object": str(state.key),
                    "retry": retry,
                    "error": repr(failure),
                },
            )
            raise PermanentError(str(failure)) from failure
        _log.warning(
            "%s for %s %s failed (retry %d): %r; again in %g s",
            spec.what,
            spec.kind[1],
            state.key,
            retry,
            failure,
            delay,
            extra={
                "handler": spec.id,
                "object": str(state.key),
                "retry": retry,
                "delay": delay,
                "error": repr(failure),
            },
        )
        return delay

    async def _daemon_loop(self, state: _Object, run: _Run) -> None:
        if await self._initial_delay(state, run):
            return
        clock = self._operator.clock
        started = clock.now()
        retry = 0
        while not run.stopper.is_set():
            try:
                delay = await self._attempt(state, run, retry=retry, started=started)
            except PermanentError:
                return
            if delay is None:
                _log.debug("%s for %s returned: not restarted", run.spec.what, state.key)
                return
            retry += 1
            await run.stopper.sleep(delay)

    async def _timer_loop(self, state: _Object, run: _Run) -> None:
        spec = run.spec
        clock = self._operator.clock
        if await self._initial_delay(state, run):
            return
        retry, started = 0, clock.now()
        while not run.stopper.is_set():
            if spec.idle is not None:
                # The last change moves on while we sleep: sleep again until it stays put.
                while not run.stopper.is_set() and clock.now() - state.changed_at < spec.idle:
                    await run.stopper.sleep(state.changed_at + spec.idle - clock.now())
                if run.stopper.is_set():
                    return
            if retry == 0:
                started = clock.now()
            called_at = clock.now()
            try:
                delay = await self._attempt(state, run, retry=retry, started=started)
            except PermanentError:
                return
            if delay is not None:
                retry += 1
                await run.stopper.sleep(delay)
                continue
            retry = 0
            interval = spec.interval or 0.0  # timer() requires an interval > 0
            wait = interval
            if spec.sharp:
                wait = interval - ((clock.now() - called_at) % interval)
            await run.stopper.sleep(wait)

    async def _write_patch(self, state: _Object, spec: _Spec, patch: Mapping[str, Any]) -> None:
        client = self._operator.client
        namespace = state.key.namespace or None
        main = {k: v for k, v in patch.items() if k != "status"}
        try:
            if main:
                await client.patch(spec.kind, state.key.name, main, namespace=namespace)
            if "status" in patch:
                await client.status().patch(
                    spec.kind, state.key.name, {"status": patch["status"]}, namespace=namespace
                )
        except Exception as err:
            _log.error(
                "%s for %s %s: writing its patch %r failed: %r",
                spec.what,
                spec.kind[1],
                state.key,
                dict(patch),
                err,
                extra={"handler": spec.id, "object": str(state.key), "error": repr(err)},
            )


class _LiveMeta(Mapping[str, Any]):
    """A live view of ``metadata.labels`` or ``metadata.annotations``."""

    def __init__(self, body: dict[str, Any], field_name: str) -> None:
        self._body = body
        self._field = field_name

    def _target(self) -> Mapping[str, Any]:
        return _meta_map(self._body, self._field)

    def __getitem__(self, key: str) -> Any:
        return self._target()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._target())

    def __len__(self) -> int:
        return len(self._target())

    def __repr__(self) -> str:
        return repr(dict(self._target()))


def _meta_map(obj: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    metadata = obj.get("metadata")
    value = metadata.get(name) if isinstance(metadata, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def _key_of(obj: Mapping[str, Any]) -> ObjectKey:
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping) or not metadata.get("name"):
        raise ValueError(f"Daemons: the object has no metadata.name: {dict(obj)!r:.200}")
    return ObjectKey(str(metadata.get("namespace") or ""), str(metadata["name"]))
