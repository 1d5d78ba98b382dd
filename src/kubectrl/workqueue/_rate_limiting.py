"""The rate-limiting queue: the queue every controller uses.

A :class:`DelayingQueue` plus a :class:`RateLimiter`: a failed key goes back with
``add_rate_limited`` and waits as long as the limiter says; a key that succeeded is ``forget``-ed
so its backoff starts over. This is client-go's ``RateLimitingInterface``, and the contract a
controller's worker loop follows (controller-runtime's ``reconcileHandler``).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, TypeVar

from kubectrl._internal.clock import Clock
from kubectrl.workqueue._delaying import DelayingQueue
from kubectrl.workqueue._metrics import MetricsProvider
from kubectrl.workqueue._rate_limiters import RateLimiter, default_controller_rate_limiter

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["RateLimitingQueue"]

T = TypeVar("T", bound=Hashable)


class RateLimitingQueue(DelayingQueue[T]):
    """A :class:`DelayingQueue` that retries failed keys with backoff.

    ``rate_limiter`` defaults to :func:`default_controller_rate_limiter` on the queue's clock
    (per key 5 ms doubling to 1000 s, at most 10 retries per second after a burst of 100).

    Guarantees: all of :class:`Queue`'s and :class:`DelayingQueue`'s. ``add_rate_limited`` never
    blocks; the wait happens in the queue.

    Caveats: ``forget`` only resets the backoff; it does not remove a pending retry, and ``done``
    is still required. One limiter instance belongs to one queue (its per-key counts are the
    queue's retries).

    Example (a worker, as controller-runtime runs it)::

        queue: RateLimitingQueue[str] = RateLimitingQueue(name="foos")

        async def worker() -> None:
            async for key in queue:
                try:
                    await reconcile(key)
                except Exception:
                    queue.add_rate_limited(key)   # retry after a backoff
                else:
                    queue.forget(key)             # success: reset the backoff
                finally:
                    queue.done(key)
    """

    def __init__(
        self,
        rate_limiter: RateLimiter[T] | None = None,
        *,
        name: str | None = None,
        clock: Clock | None = None,
        metrics_provider: MetricsProvider | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        super().__init__(
            name=name, clock=clock, metrics_provider=metrics_provider, registry=registry
        )
        self._rate_limiter: RateLimiter[T] = (
            rate_limiter
            if rate_limiter is not None
            else default_controller_rate_limiter(clock=self._clock)
        )

    @property
    def rate_limiter(self) -> RateLimiter[T]:
        """The limiter deciding the delays."""
        return self._rate_limiter

    def add_rate_limited(self, item: T) -> None:
        """Add ``item`` after the delay the rate limiter gives it (ignored once shutting down)."""
        if self.shutting_down:
            return
        self.add_after(item, self._rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """Reset ``item``'s backoff (call after it succeeded); pending retries stay."""
        self._rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """How many times ``item`` has been rate-limited since it was last forgotten."""
        return self._rate_limiter.num_requeues(item)
