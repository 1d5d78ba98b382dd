"""Client-side rate limiting: a token bucket on an injected clock.

controller-runtime's default client allows 20 queries per second with bursts of 30 (client-go's
own default is 5/10); every request, watches included, takes one token before it is sent.
"""

from __future__ import annotations

from kubectrl._clock import Clock, RealClock

__all__ = ["TokenBucketRateLimiter"]


class TokenBucketRateLimiter:
    """A token bucket: ``qps`` tokens per second, at most ``burst`` saved up.

    Guarantees: over any interval ``t`` at most ``burst + qps * t`` requests pass; waiters are
    served in the order they asked (each reserves its slot at once, like
    ``golang.org/x/time/rate``). Starts full, as client-go's does. Time comes from ``clock``, so
    tests drive it with :class:`~kubectrl.FakeClock`.

    Caveats: not thread-safe; each client uses it from its own event loop.

    Example::

        >>> from kubectrl import FakeClock
        >>> limiter = TokenBucketRateLimiter(qps=1, burst=2, clock=FakeClock())
        >>> [limiter.reserve() for _ in range(3)]
        [0.0, 0.0, 1.0]
    """

    def __init__(self, qps: float = 20.0, burst: int = 30, *, clock: Clock | None = None) -> None:
        if qps <= 0:
            raise ValueError(f"qps must be > 0 (use rate_limit=None to disable), got {qps}")
        if burst < 1:
            raise ValueError(f"burst must be >= 1, got {burst}")
        self.qps = float(qps)
        self.burst = int(burst)
        self._clock = clock or RealClock()
        self._tokens = float(burst)
        self._last = self._clock.now()

    def _refill(self) -> float:
        now = self._clock.now()
        elapsed = max(0.0, now - self._last)
        self._last = now
        self._tokens = min(float(self.burst), self._tokens + elapsed * self.qps)
        return now

    def reserve(self) -> float:
        """Take one token now; return how many seconds the caller must wait before using it."""
        self._refill()
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def try_acquire(self) -> bool:
        """Take a token if one is available now, without waiting. ``*_nowait`` in spirit."""
        self._refill()
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False

    async def acquire(self) -> None:
        """Wait (on the clock) until a token is available, then take it."""
        delay = self.reserve()
        if delay > 0:
            await self._clock.sleep(delay)

    @property
    def tokens(self) -> float:
        """Tokens available now (negative while callers are queued)."""
        self._refill()
        return self._tokens

    def __repr__(self) -> str:
        return f"TokenBucketRateLimiter(qps={self.qps}, burst={self.burst})"
