"""Runnables and the groups a Manager starts them in (controller-runtime's ``runnable_group.go``).

A :class:`Runnable` is a long-running part of the process. The manager puts every runnable
into one :class:`Group`: its own parts (the HTTP servers, the webhook server, the caches, the
leader elector) and the ones given to :meth:`~kubectrl.runtime.Manager.add` (by
``need_leader_election``). :data:`START_ORDER` is the one declared sequence the groups start
in; :data:`STOP_ORDER`, its reverse, the one they stop in.

===================  ==============================================================  ========
group                what the manager puts there                                     start
===================  ==============================================================  ========
``HTTP_SERVERS``     the metrics server, the health probe server                     awaited
``WEBHOOKS``         the webhook server (iff something is registered on it)          awaited
``CACHES``           the informer factory: every informer started, then synced       awaited
``OTHERS``           runnables with ``need_leader_election = False`` (the event      launched
                     broadcaster, the sharded runner, yours)
``WARMUP``           the sources of leader-only controllers with ``enable_warmup``   awaited
                     (with leader election only)
``LEADER_ELECTION``  the leader elector (with leader election only)                  awaited
``LEADER_ONLY``      controllers, and every runnable needing leader election: once   launched
                     leading (at once without leader election)
===================  ==============================================================  ========

Why this order (controller-runtime's ``controllerManager.Start`` in ``pkg/manager/internal.go``
starts ``HTTPServers``, ``Webhooks``, ``Caches``, ``Others``, ``Warmup``, then runs the leader
elector, whose ``OnStartedLeading`` starts ``LeaderElection``): probes answer (``/readyz`` 503)
while caches sync; webhooks serve before any cache lists, since the API server may need a
conversion webhook to answer that list; nothing that reads a cache starts before it synced; warm
controllers fill their queues before the election; leader-only work waits for the lease.

An *awaited* group starts once every member's ``start()`` returned (concurrently within the
group); a member's error stops the start and is what :meth:`Manager.start` raises. A *launched*
group runs each member in a task of its own and the next group starts once every task began
(controller-runtime's ``signalReady``): a runnable's ``start()`` may still be waiting, say for
its controller's sources to sync; one that fails later stops the manager with
:class:`ManagerError`. A runnable added once its group started is launched at once.

Stop is the reverse, group by group, each group's members concurrently: leader-only runnables
drain (up to the graceful shutdown timeout), the lease is released, the other runnables stop
(the event broadcaster flushes), caches, webhooks, HTTP servers. controller-runtime's
``engageStopProcedure`` differs in one place, on purpose: it stops ``Others`` before the
leader-only runnables and cancels leader election last (a deferred call), so a successor waits
for the whole shutdown; here the lease goes as soon as no leader-only work runs any more. Every
group is stopped on shutdown, whether it started or not: the members of awaited groups are
safe to stop unstarted (informers a read started lazily are stopped too), launched runnables
that never started are not stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import enum
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import Protocol, TypeAlias, runtime_checkable

from kubectrl.errors import KubectrlError

__all__ = [
    "START_ORDER",
    "STOP_ORDER",
    "Group",
    "ManagerError",
    "Runnable",
    "RunnableGroup",
    "RunnableHandle",
    "RunnableLike",
    "Runnables",
    "Stage",
]

log = logging.getLogger("kubectrl.runtime.manager")


@runtime_checkable
class Runnable(Protocol):
    """A long-running part of the process the manager starts and stops (``manager.Runnable``).

    ``start()`` returns once running; ``stop(timeout)`` stops and waits up to ``timeout`` s
    (a :class:`~kubectrl.runtime.Controller` is one). An optional ``need_leader_election``
    attribute (default ``True``, as controller-runtime) says whether it runs on the leader only.
    A leader-only runnable with a ``set_leader_fence(fence)`` method (a Controller has one) is
    given the elector's :meth:`~kubectrl.leaderelection.LeaderElector.fence` before it starts
    (``None`` without leader election), to ask before each step it takes.
    A plain ``async def run() -> None`` that runs until cancelled is accepted too.

    Example::

        class Ticker:
            need_leader_election = False
            async def start(self) -> None: ...
            async def stop(self, timeout: float | None = 30.0) -> None: ...
    """

    async def start(self) -> None:
        """Start; return once running."""
        ...

    async def stop(self, timeout: float | None = 30.0) -> None:
        """Stop; wait up to ``timeout`` s for in-flight work."""
        ...


RunnableLike: TypeAlias = "Runnable | Callable[[], Awaitable[None]]"


class ManagerError(KubectrlError):
    """A runnable failed, so the manager stopped; ``__cause__`` is the runnable's error.

    Not retryable as is (e.g. a cache that never synced: fix RBAC or install the CRD).

    Example::

        try:
            await manager.start()
        except ManagerError as err:
            print(err.__cause__)
    """


class Group(enum.Enum):
    """A group of runnables started together (controller-runtime's ``runnables`` fields).

    The value is the name the manager's log gives it ("Stopping and waiting for caches").
    """

    HTTP_SERVERS = "HTTP servers"
    WEBHOOKS = "webhooks"
    CACHES = "caches"
    OTHERS = "non leader election runnables"
    WARMUP = "warmup runnables"
    LEADER_ELECTION = "leader election"
    LEADER_ONLY = "leader election runnables"


@dataclasses.dataclass(frozen=True)
class Stage:
    """One step of :data:`START_ORDER`: a group and how it starts.

    ``launched``: each member runs in a task of its own (else its ``start()`` is awaited);
    ``after_leading``: the stage waits until this replica leads (with leader election).
    """

    group: Group
    launched: bool = False
    after_leading: bool = False


#: The order groups start in; each group starts once the one before it has (see the module
#: docs for why, and for what the manager puts in each).
START_ORDER: tuple[Stage, ...] = (
    Stage(Group.HTTP_SERVERS),
    Stage(Group.WEBHOOKS),
    Stage(Group.CACHES),
    Stage(Group.OTHERS, launched=True),
    Stage(Group.WARMUP),
    Stage(Group.LEADER_ELECTION),
    Stage(Group.LEADER_ONLY, launched=True, after_leading=True),
)

#: The order groups stop in: :data:`START_ORDER` reversed.
STOP_ORDER: tuple[Stage, ...] = tuple(reversed(START_ORDER))


class RunnableHandle:
    """One runnable of a group, and its task once launched."""

    def __init__(self, runnable: RunnableLike, group: Group, *, awaited: bool) -> None:
        self.runnable = runnable
        self.group = group
        self.awaited = awaited  # a member of an awaited group: stopped even if never started
        self.task: asyncio.Task[None] | None = None
        self.started = False
        self._began = asyncio.Event()
        self.name = str(getattr(runnable, "name", "") or getattr(runnable, "__qualname__", "")) or (
            type(runnable).__name__
        )

    async def start(self) -> None:
        """Start an awaited group's member: return once its ``start()`` returned."""
        self._began.set()
        if not isinstance(self.runnable, Runnable):
            raise TypeError(f"{self.name}: a {self.group.value} member must be a Runnable")
        await self.runnable.start()
        self.started = True

    def launch(self, on_done: Callable[[RunnableHandle], None]) -> None:
        """Run in a task of its own; ``on_done`` is called when the task ends."""
        self.task = asyncio.ensure_future(self._run())
        self.task.add_done_callback(lambda _: self._began.set())
        self.task.add_done_callback(lambda _: on_done(self))

    async def began(self) -> None:
        """Wait until the task began (entered ``start()``) or ended."""
        await self._began.wait()

    async def _run(self) -> None:
        self._began.set()
        if isinstance(self.runnable, Runnable):
            await self.runnable.start()
            self.started = True
            await asyncio.get_running_loop().create_future()  # until cancelled by stop()
        else:
            self.started = True
            result = self.runnable()
            if inspect.isawaitable(result):
                await result

    async def stop(self, timeout: float) -> None:
        task = self.task
        if task is None:
            if self.awaited and isinstance(self.runnable, Runnable):
                await self._stop_runnable(self.runnable, timeout)
            return
        if task.done():
            return
        if isinstance(self.runnable, Runnable) and self.started:
            await self._stop_runnable(self.runnable, timeout)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            return
        # A plain coroutine (or a Runnable still starting, e.g. waiting for its caches): cancel
        # and give it the timeout to unwind.
        task.cancel()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait({task}, timeout=timeout)

    async def _stop_runnable(self, runnable: Runnable, timeout: float) -> None:
        try:
            await runnable.stop(timeout)
        except Exception:
            log.exception("runnable failed to stop", extra={"runnable": self.name})

    def __repr__(self) -> str:
        return f"<runnable {self.name} in {self.group.name}>"


class RunnableGroup:
    """The runnables of one :class:`Group` (controller-runtime's ``runnableGroup``).

    Members added before :meth:`start` start with the group; members added after it are
    launched at once; none is launched once the group stops. ``before_launch`` is called with
    each handle just before it is launched (the manager hands leader-only runnables the
    elector's fence there).
    """

    def __init__(
        self,
        stage: Stage,
        on_done: Callable[[RunnableHandle], None],
        before_launch: Callable[[RunnableHandle], None] | None = None,
    ) -> None:
        self.stage = stage
        self.handles: list[RunnableHandle] = []
        self.started = False
        self.stopping = False
        self._on_done = on_done
        self._before_launch = before_launch

    def add(self, runnable: RunnableLike) -> RunnableHandle:
        handle = RunnableHandle(runnable, self.stage.group, awaited=not self.stage.launched)
        self.handles.append(handle)
        if self.started and not self.stopping:
            self._launch(handle)
        return handle

    async def start(self) -> None:
        """Start every member (awaited, or launched and begun; see :class:`Stage`)."""
        self.started = True
        handles = list(self.handles)
        if self.stage.launched:
            for handle in handles:
                if handle.task is None:
                    self._launch(handle)
            await asyncio.gather(*(handle.began() for handle in handles))
            return
        tasks = [asyncio.ensure_future(handle.start()) for handle in handles]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    async def stop(self, timeout: float) -> None:
        """Stop every member concurrently, each given up to ``timeout`` s."""
        self.stopping = True
        await asyncio.gather(*(handle.stop(timeout) for handle in list(self.handles)))

    def _launch(self, handle: RunnableHandle) -> None:
        if self._before_launch is not None:
            self._before_launch(handle)
        handle.launch(self._on_done)

    def __repr__(self) -> str:
        return f"<RunnableGroup {self.stage.group.name} runnables={len(self.handles)}>"


class Runnables:
    """Every group of a manager, started in :data:`START_ORDER` and stopped in reverse.

    With ``leader_election``, the stage marked ``after_leading`` waits for :meth:`elected`
    (the elector's ``on_started_leading``); without, it follows at once, as controller-runtime
    treats having no leader election as being elected.

    Example::

        runnables = Runnables(on_done, leader_election=False)
        runnables.add(ticker, Group.OTHERS)
        await runnables.start()          # returns once every group started
        await runnables.stop(lambda: 30.0)
    """

    def __init__(
        self,
        on_done: Callable[[RunnableHandle], None],
        *,
        leader_election: bool,
        before_launch: Callable[[RunnableHandle], None] | None = None,
    ) -> None:
        self.groups: dict[Group, RunnableGroup] = {
            stage.group: RunnableGroup(stage, on_done, before_launch) for stage in START_ORDER
        }
        self._leader_election = leader_election
        self._elected = asyncio.Event()
        self._stopping = False

    def add(self, runnable: RunnableLike, group: Group) -> RunnableHandle:
        """Add ``runnable`` to ``group`` (launched at once if that group started)."""
        if self._stopping:
            # Not launched any more; kept so that it is still listed.
            handle = RunnableHandle(runnable, group, awaited=False)
            self.groups[group].handles.append(handle)
            return handle
        return self.groups[group].add(runnable)

    def handles(self) -> list[RunnableHandle]:
        """Every runnable, group by group in start order."""
        return list(self._all())

    def started(self, group: Group) -> bool:
        """Whether ``group`` started (for ``LEADER_ONLY``: whether this replica leads)."""
        return self.groups[group].started

    def elected(self) -> None:
        """This replica leads: the ``after_leading`` stage may start."""
        self._elected.set()

    def request_stop(self) -> None:
        """Start no further group and launch nothing more (a stop is under way)."""
        self._stopping = True
        self._elected.set()  # wakes a start() waiting for leadership, which then returns

    async def start(self) -> None:
        """Start the groups in :data:`START_ORDER`; return once the last one started.

        Returns early once :meth:`request_stop` was called (also while waiting for
        leadership); raises what an awaited group's
        member raised (the groups started so far keep running: :meth:`stop` stops them).
        """
        for stage in START_ORDER:
            if stage.after_leading and self._leader_election and not self._stopping:
                await self._elected.wait()
            if self._stopping:
                return
            log.info("Starting %s", stage.group.value)
            await self.groups[stage.group].start()

    async def stop(self, timeout: Callable[[], float]) -> None:
        """Stop the groups in :data:`STOP_ORDER`; each is given ``timeout()`` s when reached."""
        self._stopping = True
        for stage in STOP_ORDER:
            log.info("Stopping and waiting for %s", stage.group.value)
            await self.groups[stage.group].stop(timeout())

    def _all(self) -> Iterator[RunnableHandle]:
        for stage in START_ORDER:
            yield from self.groups[stage.group].handles
