"""Read your own writes: what a reconcile wrote, and whether the cache has seen it yet.

Kubernetes 1.36's stale controller mitigation (KEP-5647;
``pkg/controller/util/consistency/consistency.go``): a controller notes the resourceVersion of
every write made while reconciling a key, and before the next reconcile of that key checks that
its informers have synced at least that far (``LastStoreSyncResourceVersion``). Here the
:class:`~kubectrl.runtime.CachedClient` notes each write made inside a reconcile
(:func:`note_write`, through the context of the running reconcile) and the
:class:`~kubectrl.runtime.Controller` waits for them before it reconciles the key again.

Memory stays bounded: a key's writes are dropped once its next reconcile found them seen (or
gave up on them), and whenever the table doubles in size, the writes its informers have seen
are swept out, whether their keys come back or not.
"""

from __future__ import annotations

import contextvars
import dataclasses
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kubectrl._internal.clock import Clock
from kubectrl.cache import compare_resource_versions, is_comparable_resource_version

if TYPE_CHECKING:
    from kubectrl.cache import Informer
    from kubectrl.runtime._reconcile import Request

__all__ = ["WriteTracker", "current_tracker", "note_write"]

log = logging.getLogger("kubectrl.runtime.controller")

#: How long a write may stay unseen before the controller stops waiting for it: past the
#: apiserver's bookmark period (about a minute), even an informer that filters the object out
#: has moved past it, so a write still unseen then is one nothing will show (a stopped
#: informer, a server whose clock went back).
GIVE_UP_AFTER = 90.0


@dataclasses.dataclass
class Expectation:
    """One informer must reach ``resource_version`` (noted at ``since`` on the clock)."""

    informer: Informer
    resource_version: str
    since: float
    what: str


class WriteTracker:
    """The writes of one controller's reconciles not yet seen by its informers, by key."""

    def __init__(self, controller: str, clock: Clock) -> None:
        self.controller = controller
        self.clock = clock
        self._pending: dict[Request, dict[int, Expectation]] = {}
        self._sweep_at = 64
        self._warned_incomparable: set[str] = set()

    def __len__(self) -> int:
        return sum(len(by_informer) for by_informer in self._pending.values())

    def note(
        self,
        request: Request,
        informers: Iterable[Informer],
        resource_version: str,
        *,
        what: str,
    ) -> None:
        """Note that reconciling ``request`` wrote ``what`` at ``resource_version``, which
        each of ``informers`` must have seen before the next reconcile of ``request``."""
        if not is_comparable_resource_version(resource_version):
            if what not in self._warned_incomparable:
                self._warned_incomparable.add(what)
                log.warning(
                    "controller %s: %s was written at resourceVersion %r, which cannot be "
                    "ordered (not a positive decimal integer): the next reconcile does not "
                    "wait for the cache to see it",
                    self.controller,
                    what,
                    resource_version,
                    extra={"controller": self.controller, "resource_version": resource_version},
                )
            return
        now = self.clock.now()
        by_informer = self._pending.setdefault(request, {})
        for informer in informers:
            current = by_informer.get(id(informer))
            if current is None or (
                compare_resource_versions(resource_version, current.resource_version) > 0
            ):
                by_informer[id(informer)] = Expectation(informer, resource_version, now, what)
        if not by_informer:
            del self._pending[request]
        if len(self._pending) >= self._sweep_at:
            self.sweep()

    def take(self, request: Request) -> list[Expectation]:
        """The writes of ``request``'s reconciles its informers have not seen yet (forgotten
        here: the caller waits for them, or notes them again with :meth:`keep`)."""
        by_informer = self._pending.pop(request, None)
        if not by_informer:
            return []
        return [e for e in by_informer.values() if not _seen(e)]

    def keep(self, request: Request, expectations: Iterable[Expectation]) -> None:
        """Put back what :meth:`take` returned and is still unseen (the key was requeued)."""
        by_informer = self._pending.setdefault(request, {})
        for expectation in expectations:
            current = by_informer.get(id(expectation.informer))
            if current is None or (
                compare_resource_versions(expectation.resource_version, current.resource_version)
                > 0
            ):
                by_informer[id(expectation.informer)] = expectation
        if not by_informer:
            del self._pending[request]

    def sweep(self) -> None:
        """Drop every noted write its informer has seen (keys that never came back)."""
        for request in list(self._pending):
            by_informer = self._pending[request]
            for key in [k for k, e in by_informer.items() if _seen(e)]:
                del by_informer[key]
            if not by_informer:
                del self._pending[request]
        self._sweep_at = max(64, 2 * len(self._pending))

    def clear(self) -> None:
        """Forget everything (the controller stopped)."""
        self._pending.clear()


def _seen(expectation: Expectation) -> bool:
    try:
        return expectation.informer.has_seen(expectation.resource_version)
    except ValueError:  # the informer's own position cannot be ordered: nothing to wait for
        return True


#: The tracker and key of the reconcile running in this context (set by the controller when
#: read-your-writes is on; a sync reconcile's thread and the blocking client's calls inherit it).
_running: contextvars.ContextVar[tuple[WriteTracker, Request] | None] = contextvars.ContextVar(
    "kubectrl_read_your_writes", default=None
)


def current_tracker() -> tuple[WriteTracker, Request] | None:
    """The tracker and key of the reconcile running here, or ``None``."""
    return _running.get()


def enter(
    tracker: WriteTracker, request: Request
) -> contextvars.Token[tuple[WriteTracker, Request] | None]:
    """Make ``tracker`` note the writes of this context, for ``request``."""
    return _running.set((tracker, request))


def leave(token: contextvars.Token[tuple[WriteTracker, Request] | None]) -> None:
    """Undo :func:`enter`."""
    _running.reset(token)


def note_write(informers: Iterable[Informer], resource_version: str, *, what: str) -> None:
    """Note a write made in this context, if a reconcile with read-your-writes runs here."""
    running = _running.get()
    if running is not None:
        tracker, request = running
        tracker.note(request, informers, resource_version, what=what)
