"""Rate limiters: how long a key waits before it is retried.

One protocol, client-go's ``RateLimiter``: ``when(item)`` records a failure of ``item`` and returns
the delay before its retry; ``forget(item)`` clears its history (call it after a success);
``num_requeues(item)`` reports its recorded failures. The class names and defaults are
client-go's, so they can be looked up there:

- :class:`ItemExponentialFailureRateLimiter`: per key, 5 ms doubling, capped at 1000 s.
- :class:`BucketRateLimiter`: one token bucket for all keys, 10 per second, burst 100.
- :class:`ItemFastSlowRateLimiter`: per key, a short delay for the first attempts, then a long one.
- :class:`MaxOfRateLimiter`: the longest delay of several limiters.
- :class:`WithMaxWaitRateLimiter`: another limiter with its delays capped.

:func:`default_controller_rate_limiter` is client-go's ``DefaultControllerRateLimiter`` (and
controller-runtime's default): per-key exponential backoff, and a global bucket so that a burst
of failures across many keys cannot hammer the API server.

Every limiter is thread-safe: ``when`` runs wherever ``add_rate_limited`` is called.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Protocol, TypeVar

from kubectrl._internal.clock import Clock, RealClock

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "WithMaxWaitRateLimiter",
    "default_controller_rate_limiter",
]

T = TypeVar("T", bound=Hashable)
T_contra = TypeVar("T_contra", bound=Hashable, contravariant=True)

# Above this many doublings the delay is past any sane cap, and 2.0 ** exponent would overflow.
_MAX_EXPONENT = 1000


class RateLimiter(Protocol[T_contra]):
    """Decides how long a failed key waits before its retry (client-go's ``RateLimiter``).

    Example::

        >>> limiter = ItemExponentialFailureRateLimiter()
        >>> limiter.when("default/foo"), limiter.when("default/foo")
        (0.005, 0.01)
        >>> limiter.num_requeues("default/foo")
        2
        >>> limiter.forget("default/foo")
        >>> limiter.when("default/foo")
        0.005
    """

    def when(self, item: T_contra) -> float:
        """Record a failure of ``item``; return the seconds to wait before retrying it."""
        ...

    def forget(self, item: T_contra) -> None:
        """Clear ``item``'s failure history (it succeeded, or will never be retried)."""
        ...

    def num_requeues(self, item: T_contra) -> int:
        """How many failures of ``item`` are recorded."""
        ...


class ItemExponentialFailureRateLimiter(RateLimiter[T]):
    """Per key: ``base_delay * 2 ** failures``, capped at ``max_delay``.

    Defaults are client-go's ``DefaultControllerRateLimiter`` ones: 5 ms base, 1000 s cap, so a
    key is retried after 5 ms, 10 ms, 20 ms, ... and then every 1000 s (16 min 40 s).

    Memory use: one integer per key that has failed and not been forgotten; call ``forget``
    after a success (the rate-limiting queue's ``forget``).

    Example::

        >>> limiter = ItemExponentialFailureRateLimiter(base_delay=1.0, max_delay=3.0)
        >>> [limiter.when("k") for _ in range(4)]
        [1.0, 2.0, 3.0, 3.0]
    """

    def __init__(self, *, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        if base_delay < 0 or max_delay < 0:
            raise ValueError("base_delay and max_delay must be >= 0")
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._lock = threading.Lock()
        self._failures: dict[T, int] = {}

    def when(self, item: T) -> float:
        with self._lock:
            exponent = self._failures.get(item, 0)
            self._failures[item] = exponent + 1
        if exponent > _MAX_EXPONENT:
            return self.max_delay
        return min(self.base_delay * 2.0**exponent, self.max_delay)

    def forget(self, item: T) -> None:
        with self._lock:
            self._failures.pop(item, None)

    def num_requeues(self, item: T) -> int:
        with self._lock:
            return self._failures.get(item, 0)

    def __repr__(self) -> str:
        return (
            f"ItemExponentialFailureRateLimiter(base_delay={self.base_delay!r}, "
            f"max_delay={self.max_delay!r})"
        )


class BucketRateLimiter(RateLimiter[T]):
    """One token bucket for all keys: ``qps`` tokens per second, holding at most ``burst``.

    Each ``when`` takes a token; when none is left it reserves a future one and returns the wait
    until then (the semantics of Go's ``rate.Limiter.Reserve``, which client-go uses). Defaults
    are client-go's ``DefaultControllerRateLimiter``: 10 per second, burst 100. So a full bucket
    lets 100 retries through at once, then one every 100 ms.

    Caveats: keys are not tracked, so ``forget`` does nothing and ``num_requeues`` is 0. A
    reservation is never returned, even if the key is forgotten before its retry.

    Example::

        >>> from kubectrl._internal.clock import FakeClock
        >>> limiter = BucketRateLimiter(qps=10.0, burst=2, clock=FakeClock())
        >>> [limiter.when(key) for key in "abc"]
        [0.0, 0.0, 0.1]
    """

    def __init__(self, *, qps: float = 10.0, burst: int = 100, clock: Clock | None = None) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError("qps must be > 0 and burst >= 1")
        self.qps = qps
        self.burst = burst
        self._clock: Clock = clock if clock is not None else RealClock()
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._last = self._clock.now()

    def when(self, item: T) -> float:
        with self._lock:
            now = self._clock.now()
            if now > self._last:
                self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
                self._last = now
            self._tokens -= 1.0
            if self._tokens >= 0:
                return 0.0
            return -self._tokens / self.qps

    def forget(self, item: T) -> None:
        pass

    def num_requeues(self, item: T) -> int:
        return 0

    def __repr__(self) -> str:
        return f"BucketRateLimiter(qps={self.qps!r}, burst={self.burst!r})"


class ItemFastSlowRateLimiter(RateLimiter[T]):
    """Per key: ``fast_delay`` for the first ``max_fast_attempts`` failures, then ``slow_delay``.

    client-go has no defaults for it; a typical use is polling something that settles quickly
    most of the time. Memory use: one integer per key not forgotten.

    Example::

        >>> limiter = ItemFastSlowRateLimiter(fast_delay=0.1, slow_delay=10.0, max_fast_attempts=2)
        >>> [limiter.when("k") for _ in range(3)]
        [0.1, 0.1, 10.0]
    """

    def __init__(self, *, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        self.fast_delay = fast_delay
        self.slow_delay = slow_delay
        self.max_fast_attempts = max_fast_attempts
        self._lock = threading.Lock()
        self._attempts: dict[T, int] = {}

    def when(self, item: T) -> float:
        with self._lock:
            attempts = self._attempts.get(item, 0) + 1
            self._attempts[item] = attempts
        return self.fast_delay if attempts <= self.max_fast_attempts else self.slow_delay

    def forget(self, item: T) -> None:
        with self._lock:
            self._attempts.pop(item, None)

    def num_requeues(self, item: T) -> int:
        with self._lock:
            return self._attempts.get(item, 0)

    def __repr__(self) -> str:
        return (
            f"ItemFastSlowRateLimiter(fast_delay={self.fast_delay!r}, "
            f"slow_delay={self.slow_delay!r}, max_fast_attempts={self.max_fast_attempts!r})"
        )


class MaxOfRateLimiter(RateLimiter[T]):
    """The longest delay any of ``limiters`` asks for; every limiter records every failure.

    ``num_requeues`` is the largest of theirs and ``forget`` forgets in all of them.

    Example::

        >>> limiter = MaxOfRateLimiter(
        ...     ItemFastSlowRateLimiter(fast_delay=1.0, slow_delay=5.0, max_fast_attempts=1),
        ...     ItemExponentialFailureRateLimiter(base_delay=0.5),
        ... )
        >>> [limiter.when("k") for _ in range(4)]
        [1.0, 5.0, 5.0, 5.0]
    """

    def __init__(self, *limiters: RateLimiter[T]) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self.limiters: tuple[RateLimiter[T], ...] = limiters

    def when(self, item: T) -> float:
        # Ask every limiter (no short cut): each records the failure, as in client-go.
        return max([limiter.when(item) for limiter in self.limiters])

    def forget(self, item: T) -> None:
        for limiter in self.limiters:
            limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return max(limiter.num_requeues(item) for limiter in self.limiters)

    def __repr__(self) -> str:
        return f"MaxOfRateLimiter({', '.join(map(repr, self.limiters))})"


class WithMaxWaitRateLimiter(RateLimiter[T]):
    """``limiter``'s delays, never longer than ``max_delay`` seconds.

    Example::

        >>> limiter = WithMaxWaitRateLimiter(
        ...     ItemExponentialFailureRateLimiter(base_delay=1.0), max_delay=3.0
        ... )
        >>> [limiter.when("k") for _ in range(4)]
        [1.0, 2.0, 3.0, 3.0]
    """

    def __init__(self, limiter: RateLimiter[T], *, max_delay: float) -> None:
        self.limiter = limiter
        self.max_delay = max_delay

    def when(self, item: T) -> float:
        return min(self.limiter.when(item), self.max_delay)

    def forget(self, item: T) -> None:
        self.limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return self.limiter.num_requeues(item)

    def __repr__(self) -> str:
        return f"WithMaxWaitRateLimiter({self.limiter!r}, max_delay={self.max_delay!r})"


def default_controller_rate_limiter(*, clock: Clock | None = None) -> MaxOfRateLimiter[Hashable]:
    """client-go's ``DefaultControllerRateLimiter``, controller-runtime's default.

    The max of a per-key exponential backoff (5 ms doubling to 1000 s) and a global token bucket
    (10 per second, burst 100). ``clock`` drives the bucket.

    Example::

        >>> limiter = default_controller_rate_limiter()
        >>> limiter.when("default/foo")
        0.005
    """
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(base_delay=0.005, max_delay=1000.0),
        BucketRateLimiter(qps=10.0, burst=100, clock=clock),
    )
