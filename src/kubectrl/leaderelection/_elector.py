"""The leader elector: client-go's ``tools/leaderelection`` loop around the pure decisions.

One candidate runs :meth:`LeaderElector.run`:

1. **Acquire**: try to take the lease; if another holder's lease is still valid, try again every
   ``retry_period`` stretched by a random jitter of up to 1.2x (client-go's ``JitterUntil``), so
   candidates started together do not knock in lockstep, and once more at the moment that lease
   expires on our clock (client-go waits for its next retry: up to 1.2 retry periods more).
2. **Lead**: call ``on_started_leading``; every ``retry_period`` renew the lease. A renewal that
   keeps failing (conflict, another holder, no answer) is retried every ``retry_period`` until
   ``renew_deadline`` has passed since the cycle began; then leadership is lost.
3. **Exit**: ``on_stopped_leading`` always runs, even if this candidate never led. After a
   :meth:`LeaderElector.stop` (or task cancellation) with ``release_on_cancel``, the lease is
   written with an empty holder and ``leaseDurationSeconds=1`` so a successor takes over at once.

Why the defaults are safe: a follower takes over only after it has seen no change to the lease
for ``lease_duration`` (15 s) on its *own* clock, while the leader gives up after failing to
renew for ``renew_deadline`` (10 s). The 5 s gap covers one retry period and scheduling delays.

A process frozen (SIGSTOP, a long GC or swap storm) past ``lease_duration`` is the case client-go
only notices at its next renewal, after its work has resumed. :meth:`LeaderElector.fence` closes
that gap: leader-only work asks it before each step, and it answers ``False`` as soon as the
last successful renewal is older than ``renew_deadline`` on this process's monotonic clock (which
keeps running while the process is stopped), declaring leadership lost at once. A follower can
only take over ``lease_duration`` after it saw that renewal, which is later, so a step the fence
lets through cannot start after a successor acquired the lease. What the fence cannot stop is a
step already past it when the process froze (a write in flight lands when the process resumes).
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import math
import random
import socket
import threading
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from kubectrl._internal.aio import call_in_loop
from kubectrl._internal.clock import Clock, RealClock
from kubectrl._internal.lease import (
    LeaderElectionRecord,
    Observation,
    observe,
    plan_acquire_or_renew,
    plan_release,
)
from kubectrl.errors import KubectrlError, NotFoundError
from kubectrl.leaderelection._lock import ResourceLock
from kubectrl.leaderelection._metrics import LeaderStatusMetric

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = [
    "JITTER_FACTOR",
    "LeaderElectionConfig",
    "LeaderElectionLostError",
    "LeaderElector",
    "default_identity",
]

log = logging.getLogger("kubectrl.leaderelection")

T = TypeVar("T")

#: How long after a lease's expiry on our clock the acquire attempt is made.
_EXPIRY_MARGIN = 0.01
#: client-go's ``JitterFactor``: acquire retries wait ``retry_period * (1 + random() * 1.2)``.
JITTER_FACTOR = 1.2

_MaybeAwaitable = Awaitable[None] | None


def default_identity() -> str:
    """``<hostname>_<uuid4>``, controller-runtime's default candidate identity.

    The random part keeps two processes on one host (or a restarted pod) distinct.

    Example::

        >>> "_" in default_identity()
        True
    """
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaderElectionLostError(KubectrlError):
    """This process led and then lost the lease (it could not renew before the deadline).

    Not retryable: leader-only work may have been interrupted mid-way; controller-runtime makes
    the process exit so a fresh start rebuilds its state. Raised by :meth:`LeaderElector.run`
    after ``on_stopped_leading`` ran.

    Example::

        try:
            await elector.run()
        except LeaderElectionLostError:
            sys.exit(1)
    """


@dataclasses.dataclass(frozen=True)
class LeaderElectionConfig:
    """Timing of leader election, validated as client-go validates it.

    Defaults are controller-runtime's: ``lease_duration`` 15 s, ``renew_deadline`` 10 s,
    ``retry_period`` 2 s. They must satisfy ``lease_duration > renew_deadline >
    1.2 * retry_period > 0``, else :class:`ValueError`. ``lease_duration`` is written to the Lease
    in whole seconds (at least 1). ``release_on_cancel`` (default ``False``, as client-go) gives
    the lease up on a clean stop. ``name`` labels the ``leader_election_master_status`` metric
    (default: the lock's name).

    Example::

        >>> LeaderElectionConfig(lease_duration=4, renew_deadline=3, retry_period=0.5).retry_period
        0.5
    """

    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    release_on_cancel: bool = False
    name: str = ""

    def __post_init__(self) -> None:
        if self.lease_duration <= 0 or self.renew_deadline <= 0 or self.retry_period <= 0:
            raise ValueError(
                "leader election: lease_duration, renew_deadline and retry_period must all be > 0"
            )
        if self.lease_duration <= self.renew_deadline:
            raise ValueError(
                f"leader election: lease_duration ({self.lease_duration}) must be greater than "
                f"renew_deadline ({self.renew_deadline})"
            )
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise ValueError(
                f"leader election: renew_deadline ({self.renew_deadline}) must be greater than "
                f"{JITTER_FACTOR} * retry_period ({self.retry_period})"
            )

    @property
    def lease_duration_seconds(self) -> int:
        """``lease_duration`` as the Lease stores it (whole seconds, at least 1)."""
        return max(1, int(self.lease_duration))


class LeaderElector:
    """Campaigns for one lock and runs callbacks as leadership comes and goes.

    Callbacks may be plain functions or coroutine functions:

    - ``on_started_leading()``: called once the lease is won. If it returns an awaitable, that runs
      as a task which is cancelled (and awaited) when leadership ends.
    - ``on_stopped_leading()``: always called when :meth:`run` exits, even if it never led.
    - ``on_new_leader(identity)``: called when the observed holder changes (also to ourselves,
      and to ``""`` after a release).

    Guarantees: leader-only work starts only after this candidate wrote the lease as holder and
    is cancelled before ``on_stopped_leading`` runs; expiry is judged on the local monotonic clock
    (the injected ``clock``), never by comparing server timestamps. An exception in a callback is
    logged and does not stop the elector.

    :meth:`fence` is the check leader-only work makes before each step (a reconcile, a write):
    ``True`` only while leading and the last successful renewal is younger than
    ``renew_deadline`` on the injected clock; the first ``False`` while leading declares
    leadership lost (as a failed renewal does) and :meth:`run` raises
    :class:`LeaderElectionLostError`.

    Caveats: one :meth:`run` at a time per elector. Work that does not ask :meth:`fence` may
    overlap with a successor when the process was paused for longer than
    ``lease_duration - renew_deadline``; and a write already sent when the process froze can
    land after a successor took over. Keep leader-only writes idempotent.

    Example::

        elector = LeaderElector(
            LeaseLock(client, namespace="kube-system", name="my-ctrl", identity=default_identity()),
            LeaderElectionConfig(release_on_cancel=True),
            on_started_leading=run_controllers,
        )
        await elector.run()   # raises LeaderElectionLostError if the lease is lost
    """

    def __init__(
        self,
        lock: ResourceLock,
        config: LeaderElectionConfig | None = None,
        *,
        on_started_leading: Callable[[], _MaybeAwaitable] | None = None,
        on_stopped_leading: Callable[[], _MaybeAwaitable] | None = None,
        on_new_leader: Callable[[str], _MaybeAwaitable] | None = None,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self._lock = lock
        self._config = config if config is not None else LeaderElectionConfig()
        self._on_started_leading = on_started_leading
        self._on_stopped_leading = on_stopped_leading
        self._on_new_leader = on_new_leader
        self._clock: Clock = clock if clock is not None else RealClock()
        self._rng = rng if rng is not None else random.Random()  # noqa: S311 - jitter, not crypto
        name = self._config.name or str(getattr(lock, "name", "") or lock.describe())
        self._metric = LeaderStatusMetric(registry, name)
        self._observation: Observation | None = None
        self._reported_leader: str | None = None
        self._leading = False
        self._stopping = False
        self._stop_event: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # When the last acquire or renewal that succeeded was sent (clock.now()).
        self._renewed_at: float | None = None
        self._lost_reason: str | None = None
        self._lost_lock = threading.Lock()
        self._callback_tasks: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ public state

    @property
    def config(self) -> LeaderElectionConfig:
        """The timing in use."""
        return self._config

    @property
    def identity(self) -> str:
        """This candidate's identity."""
        return self._lock.identity

    def is_leader(self) -> bool:
        """Whether this candidate currently leads (between winning and losing or stopping)."""
        return self._leading

    @property
    def leader(self) -> str | None:
        """The holder last observed in the lock (``""`` when released), ``None`` before any read."""
        return None if self._observation is None else self._observation.record.holder_identity

    def fence(self) -> bool:
        """Whether leader-only work may take its next step now (safe from any thread).

        ``True`` only while this candidate leads and its last successful acquire or renewal was
        sent less than ``renew_deadline`` ago on the injected clock. The renewal time is taken
        when the request was *sent*, so a follower (which starts counting ``lease_duration``
        when it *sees* that write) cannot have taken over while this answers ``True``. The first
        time the renewal is found too old while leading, leadership is declared lost at once:
        :meth:`is_leader` turns ``False``, ``on_started_leading``'s task is cancelled, the lease
        is not released (a successor may hold it) and :meth:`run` raises
        :class:`LeaderElectionLostError`.

        Example::

            if not elector.fence():
                return          # not (or no longer) safely the leader: do not write
            await client.update(obj)
        """
        if not self._leading or self._lost_reason is not None:
            return False
        renewed_at = self._renewed_at
        if renewed_at is None:
            return False
        age = self._clock.now() - renewed_at
        if age < self._config.renew_deadline:
            return True
        self._declare_lost(
            f"leader election lost: {self.identity} last renewed lease {self._lock.describe()} "
            f"{age:.1f} s ago, past renew_deadline {self._config.renew_deadline} s (was the "
            "process paused?)"
        )
        return False

    def stop(self) -> None:
        """Ask :meth:`run` to return: stop campaigning, or stop leading (releasing if configured).

        Safe to call before :meth:`run` starts, and more than once.
        """
        self._stopping = True
        if self._stop_event is not None:
            self._stop_event.set()

    # ------------------------------------------------------------------ the loop

    async def run(self) -> None:
        """Campaign, lead, and return after :meth:`stop`; raise if leadership is lost.

        Returns normally when stopped (or raises :class:`asyncio.CancelledError` when the task
        is cancelled, after the same clean-up). Raises :class:`LeaderElectionLostError` when the
        lease could not be renewed before ``renew_deadline``.
        """
        self._stop_event = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        self._lost_reason = None
        if self._stopping:
            self._stop_event.set()
        lost = False
        try:
            if not await self._acquire():
                return
            lost = not await self._lead()
        finally:
            await self._call("on_stopped_leading", self._on_stopped_leading)
        if lost:
            raise LeaderElectionLostError(
                self._lost_reason
                or f"leader election lost: {self.identity} could not renew lease "
                f"{self._lock.describe()} within {self._config.renew_deadline} s"
            )

    async def _acquire(self) -> bool:
        """Try until the lease is ours (``True``) or we are stopped (``False``)."""
        log.info("attempting to acquire leader lease", extra={"lock": self._lock.describe()})
        retry = self._config.retry_period
        while not self._stopping:
            if await self._try_acquire_or_renew():
                log.info(
                    "successfully acquired lease",
                    extra={"lock": self._lock.describe(), "identity": self.identity},
                )
                return True
            delay = retry * (1.0 + self._rng.random() * JITTER_FACTOR)
            if await self._sleep_or_stop(min(delay, self._until_expiry())):
                break
        return False

    def _seen_since(self, lock: ResourceLock) -> float:
        """When this process first saw the record ``lock.get()`` just returned, on our clock.

        Now, unless the lock knows better: a lock fed by a watch (``first_seen()``, on the
        elector's clock) saw a renewal when the server sent it, up to a jittered retry period
        before this poll. Never later than now.
        """
        now = self._clock.now()
        first_seen = getattr(lock, "first_seen", None)
        if callable(first_seen):
            seen = first_seen()
            if isinstance(seen, (int, float)) and seen <= now:
                return float(seen)
        return now

    def _until_expiry(self) -> float:
        """Seconds until the observed holder's lease expires on our clock (``inf`` if none).

        client-go waits for its next jittered retry, so a takeover can come up to 1.2 retry
        periods after the lease expired; trying at the expiry itself bounds a takeover by
        ``lease_duration`` plus the time it took to observe the holder's last renewal (at most a
        retry period). The rule is unchanged: the record must still be the one seen unchanged
        for the holder's ``leaseDurationSeconds``.
        """
        observation = self._observation
        if observation is None:
            return math.inf
        holder = observation.record.holder_identity
        if not holder or holder == self.identity:
            return math.inf
        expires = observation.observed_at + observation.record.lease_duration_seconds
        # Just past it: lease_valid() counts the expiry instant itself as expired, and a timer
        # may fire a hair early.
        return max(0.0, expires - self._clock.now()) + _EXPIRY_MARGIN

    async def _lead(self) -> bool:
        """Lead until stopped (``True``) or until renewal fails past the deadline (``False``)."""
        self._leading = True
        self._metric.set(True)
        leading_task: asyncio.Task[None] | None = None
        stopped = False
        try:
            leading_task = self._start_callback("on_started_leading", self._on_started_leading)
            stopped = await self._renew_loop()
        except asyncio.CancelledError:
            stopped = True  # cancelling run() is a stop, as a cancelled context is in Go
            raise
        finally:
            if self._lost_reason is not None:
                stopped = False  # lost beats stop: never release a lease a successor may hold
            self._leading = False
            self._metric.set(False)
            if leading_task is not None and not leading_task.done():
                leading_task.cancel()
            if leading_task is not None:
                await asyncio.gather(leading_task, return_exceptions=True)
            if stopped and self._config.release_on_cancel:
                await self._release()
        return stopped

    async def _renew_loop(self) -> bool:
        retry = self._config.retry_period
        while True:
            if await self._sleep_or_stop(retry) or self._is_lost():
                return not self._is_lost()
            # Waking up long after the last renewal (the process was paused) is a loss, not a
            # reason to try once more: work may have resumed meanwhile on a stale lease.
            if not self.fence():
                return False
            deadline = self._clock.now() + self._config.renew_deadline
            while True:
                renewed = await self._before(deadline, self._try_acquire_or_renew())
                if self._is_lost():
                    return False
                if renewed:
                    break
                if self._stopping:
                    return True
                remaining = deadline - self._clock.now()
                if remaining <= 0:
                    log.warning(
                        "failed to renew lease %s within renew_deadline %s s; leadership lost",
                        self._lock.describe(),
                        self._config.renew_deadline,
                        extra={"lock": self._lock.describe(), "identity": self.identity},
                    )
                    return False
                if await self._sleep_or_stop(min(retry, remaining)):
                    return True
                if self._is_lost():
                    return False

    async def _try_acquire_or_renew(self) -> bool:
        lock = self._lock
        sent_at = self._clock.now()  # before the write: a conservative renewal time for fence()
        try:
            try:
                current = await lock.get()
            except NotFoundError:
                record = LeaderElectionRecord(
                    holder_identity=self.identity,
                    lease_duration_seconds=self._config.lease_duration_seconds,
                    acquire_time=self._clock.wall(),
                    renew_time=self._clock.wall(),
                    leader_transitions=0,
                )
                await lock.create(record)
                self._observation = Observation(record, self._clock.now())
                self._renewed_at = sent_at
                return True
            self._observation = observe(self._observation, current, self._seen_since(lock))
            desired = plan_acquire_or_renew(
                self._observation,
                identity=self.identity,
                lease_duration_seconds=self._config.lease_duration_seconds,
                now=self._clock.now(),
                wall=self._clock.wall(),
            )
            if desired is None:
                return False
            await lock.update(desired)
            self._observation = Observation(desired, self._clock.now())
            self._renewed_at = sent_at
            return True
        except KubectrlError as err:
            log.info(
                "error taking or renewing lease",
                extra={"lock": lock.describe(), "error": f"{type(err).__name__}: {err}"},
            )
            return False
        finally:
            self._report_transition()

    async def _release(self) -> None:
        record = plan_release(self._observation, identity=self.identity, wall=self._clock.wall())
        if record is None:
            return

        async def write() -> bool:
            await self._lock.update(record)
            return True

        try:
            # Bounded: a release must not hold up shutdown when the server is gone.
            done = await self._before(self._clock.now() + self._config.renew_deadline, write())
        except KubectrlError as err:
            log.warning(
                "failed to release lease",
                extra={"lock": self._lock.describe(), "error": f"{type(err).__name__}: {err}"},
            )
            return
        if done:
            self._observation = Observation(record, self._clock.now())
            self._report_transition()
            log.info("released lease", extra={"lock": self._lock.describe()})

    # ------------------------------------------------------------------ helpers

    def _is_lost(self) -> bool:
        # A method, not an inline test: fence() may set the reason during any await.
        return self._lost_reason is not None

    def _declare_lost(self, reason: str) -> None:
        with self._lost_lock:
            if self._lost_reason is not None or not self._leading:
                return
            self._lost_reason = reason
            self._leading = False
        log.error(
            "%s; stopping leader-only work",
            reason,
            extra={"lock": self._lock.describe(), "identity": self.identity, "reason": reason},
        )
        # Wake the renew loop so run() ends now (from whichever thread asked the fence).
        loop, event = self._loop, self._stop_event
        if loop is None or event is None:
            return
        call_in_loop(loop, event.set)  # False: the loop is closed, run() is over

    def _report_transition(self) -> None:
        holder = self.leader
        if holder is None or holder == self._reported_leader:
            return
        self._reported_leader = holder
        if holder:
            log.info("new leader elected", extra={"lock": self._lock.describe(), "leader": holder})
        if self._on_new_leader is not None:
            callback = self._on_new_leader
            self._start_callback("on_new_leader", lambda: callback(holder), track=True)

    def _start_callback(
        self, what: str, callback: Callable[[], _MaybeAwaitable] | None, *, track: bool = False
    ) -> asyncio.Task[None] | None:
        if callback is None:
            return None
        try:
            result = callback()
        except Exception:
            log.exception("leader election callback failed", extra={"callback": what})
            return None
        if not inspect.isawaitable(result):
            return None
        task = asyncio.ensure_future(_logged(what, result))
        if track:
            self._callback_tasks.add(task)
            task.add_done_callback(self._callback_tasks.discard)
        return task

    async def _call(self, what: str, callback: Callable[[], _MaybeAwaitable] | None) -> None:
        task = self._start_callback(what, callback)
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)

    async def _sleep_or_stop(self, seconds: float) -> bool:
        """Sleep on the clock; ``True`` if :meth:`stop` was called first (or during)."""
        if self._stopping:
            return True
        stop_event = self._stop_event
        if stop_event is None:
            raise RuntimeError("LeaderElector: waiting for stop() outside run()")
        stop_wait = asyncio.ensure_future(stop_event.wait())
        sleep = asyncio.ensure_future(self._clock.sleep(seconds))
        try:
            await asyncio.wait({stop_wait, sleep}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (stop_wait, sleep):
                task.cancel()
            await asyncio.gather(stop_wait, sleep, return_exceptions=True)
        return self._stopping

    async def _before(self, deadline: float, work: Awaitable[T]) -> T | None:
        """Await ``work`` unless the clock passes ``deadline`` first (then cancel it: ``None``)."""
        task = asyncio.ensure_future(work)
        timer = asyncio.ensure_future(self._clock.sleep(deadline - self._clock.now()))
        try:
            await asyncio.wait({task, timer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            timer.cancel()
            if not task.done():
                task.cancel()
            await asyncio.gather(task, timer, return_exceptions=True)
        if task.cancelled():
            return None
        return task.result()

    def __repr__(self) -> str:
        return (
            f"LeaderElector({self._lock.describe()!r}, identity={self.identity!r}, "
            f"leading={self._leading})"
        )


async def _logged(what: str, awaitable: Awaitable[Any]) -> None:
    try:
        await awaitable
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("leader election callback failed", extra={"callback": what})
