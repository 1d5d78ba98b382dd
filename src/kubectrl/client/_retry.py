"""Retries: automatic retries of requests, and ``retry_on_conflict`` for read-modify-write.

Request retries (``RetryPolicy``) follow client-go's rules: a 429 is retried for every verb (the
server rejected it before doing anything) after its ``Retry-After``; a connect failure is retried
for every verb (nothing reached the server); 5xx answers and connections lost mid-request are
retried only for idempotent requests (GET, and server-side apply, which converges). Attempts are
bounded. Waiting goes through the injected clock, so unit tests never sleep. Requests run
through :meth:`RetryPolicy.call`, a plain loop: the error that finally escapes is the last
attempt's own, with nothing of the retry machinery chained to it or in its traceback.

``retry_on_conflict`` is client-go's ``retry.RetryOnConflict`` with ``retry.DefaultRetry``
(5 steps, 10 ms, factor 1.0, jitter 0.1).
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import tenacity

from kubectrl._clock import Clock, RealClock
from kubectrl.errors import (
    APIConnectionError,
    APIError,
    ConflictError,
    TooManyRequestsError,
    TransportError,
)

__all__ = [
    "DEFAULT_BACKOFF",
    "DEFAULT_RETRY",
    "Backoff",
    "RetryPolicy",
    "retry_on_conflict",
    "retry_on_conflict_blocking",
]

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class Backoff:
    """client-go's ``wait.Backoff``: ``steps`` attempts, the first wait ``duration`` seconds,
    multiplied by ``factor`` each time, each wait stretched by up to ``jitter`` (a fraction), and
    never above ``cap`` seconds.

    Example::

        >>> Backoff(steps=3, duration=0.1, factor=2.0).delays()
        [0.1, 0.2]
    """

    steps: int = 5
    duration: float = 0.01
    factor: float = 1.0
    jitter: float = 0.0
    cap: float | None = None

    def delays(self, rng: random.Random | None = None) -> list[float]:
        """The waits between the ``steps`` attempts (``steps - 1`` of them)."""
        uniform = rng.random if rng is not None else random.random
        out: list[float] = []
        duration = self.duration
        for _ in range(max(0, self.steps - 1)):
            wait = duration
            if self.jitter > 0:
                wait += uniform() * self.jitter * duration
            if self.cap is not None:
                wait = min(wait, self.cap)
            out.append(wait)
            duration *= self.factor
        return out


#: client-go ``retry.DefaultRetry``: for conflicts between ordinary writers.
DEFAULT_RETRY = Backoff(steps=5, duration=0.01, factor=1.0, jitter=0.1)
#: client-go ``retry.DefaultBackoff``: for heavier contention (10 ms, x5, 4 steps).
DEFAULT_BACKOFF = Backoff(steps=4, duration=0.01, factor=5.0, jitter=0.1)


async def retry_on_conflict(
    fn: Callable[[], Awaitable[T]],
    *,
    backoff: Backoff = DEFAULT_RETRY,
    clock: Clock | None = None,
) -> T:
    """Run ``fn`` (read, modify, update) again while it raises :class:`ConflictError`.

    Guarantees: at most ``backoff.steps`` calls; any other exception propagates at once; when
    every step conflicts the last :class:`ConflictError` propagates. ``fn`` must re-read the object
    each time, or the retry repeats the same stale write.

    Example::

        async def bump():
            cm = await client.get(("v1", "ConfigMap"), "counter", namespace="ns")
            cm["data"]["n"] = str(int(cm["data"]["n"]) + 1)
            return await client.update(cm)

        await retry_on_conflict(bump)
    """
    clock = clock or RealClock()
    delays = backoff.delays()
    for delay in [*delays, None]:
        try:
            return await fn()
        except ConflictError:
            if delay is None:
                raise
        await clock.sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover


def retry_on_conflict_blocking(
    fn: Callable[[], T],
    *,
    backoff: Backoff = DEFAULT_RETRY,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Blocking twin of :func:`retry_on_conflict` (also ``Client.retry_on_conflict``).

    Example::

        retry_on_conflict_blocking(lambda: bump_counter(client))
    """
    delays = backoff.delays()
    for delay in [*delays, None]:
        try:
            return fn()
        except ConflictError:
            if delay is None:
                raise
        sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """How requests are retried automatically.

    ``max_attempts`` counts the first try (5: a request is sent at most five times). Waits double
    from ``initial_backoff`` up to ``max_backoff`` with full jitter, except after a 429 with
    ``Retry-After``, which waits what the server asked (at most ``max_retry_after``).
    ``max_attempts=1`` turns retries off.

    Example::

        config = config.with_options(retry=RetryPolicy(max_attempts=3))
    """

    max_attempts: int = 5
    initial_backoff: float = 0.2
    max_backoff: float = 5.0
    max_retry_after: float = 60.0

    def should_retry(self, err: BaseException, *, idempotent: bool) -> bool:
        """Whether ``err`` from one attempt justifies another (attempt count aside)."""
        if isinstance(err, TooManyRequestsError):
            return True
        if isinstance(err, APIConnectionError) and getattr(err, "connect_failed", False):
            return True
        if not idempotent:
            return False
        if isinstance(err, TransportError):
            return True
        return isinstance(err, APIError) and err.retryable

    def wait_for(self, err: BaseException | None, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        if isinstance(err, TooManyRequestsError) and err.retry_after is not None:
            return float(min(err.retry_after, self.max_retry_after))
        ceiling = min(self.max_backoff, self.initial_backoff * (2.0 ** (attempt - 1)))
        return float(ceiling / 2 + random.random() * ceiling / 2)  # noqa: S311 - jitter

    async def call(
        self, attempt: Callable[[], Awaitable[T]], *, idempotent: bool, clock: Clock
    ) -> T:
        """Run ``attempt`` until it succeeds, the policy says stop, or attempts run out.

        The error of the last attempt is raised as itself, with its own traceback: nothing of
        the retry loop is chained to it (a 404 after a retried 500 reads as a plain 404).

        Example::

            obj = await RetryPolicy().call(fetch, idempotent=True, clock=RealClock())
        """
        number = 0
        while True:
            number += 1
            try:
                return await attempt()
            except Exception as err:
                if number >= max(1, self.max_attempts) or not self.should_retry(
                    err, idempotent=idempotent
                ):
                    raise
                delay = self.wait_for(err, number)
            # Outside the except block, so the next attempt's error has no __context__.
            await clock.sleep(delay)

    def retrying(self, *, idempotent: bool, clock: Clock) -> tenacity.AsyncRetrying:
        """A tenacity controller applying this policy, sleeping on ``clock``."""

        def _should(state: tenacity.RetryCallState) -> bool:
            outcome = state.outcome
            if outcome is None or not outcome.failed:
                return False
            err = outcome.exception()
            return err is not None and self.should_retry(err, idempotent=idempotent)

        def _wait(state: tenacity.RetryCallState) -> float:
            err = state.outcome.exception() if state.outcome is not None else None
            return self.wait_for(err, state.attempt_number)

        return tenacity.AsyncRetrying(
            stop=tenacity.stop_after_attempt(max(1, self.max_attempts)),
            retry=_should,
            wait=_wait,
            sleep=clock.sleep,
            reraise=True,
        )
