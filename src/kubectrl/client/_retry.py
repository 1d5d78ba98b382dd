"""Retries: automatic retries of requests, and ``retry_on_conflict`` for read-modify-write.

Request retries (``RetryPolicy``) follow client-go's rules: a 429 is retried for every verb (the
server rejected it before doing anything) after its ``Retry-After``; a connect failure is retried
for every verb (nothing reached the server); 5xx answers and connections lost mid-request are
retried only for idempotent requests (GET, and server-side apply, which converges). Attempts are
bounded. A 429 or a retried 5xx that carries ``Retry-After`` waits what the server asked; other
waits grow exponentially, with jitter. Requests run through :meth:`RetryPolicy.call`, which
tenacity drives, sleeping on the injected clock (so unit tests never sleep): the error that
finally escapes is the last attempt's own, with nothing of the retry machinery chained to it or
in its traceback.

``retry_on_conflict`` is client-go's ``retry.RetryOnConflict`` with ``retry.DefaultRetry``
(5 steps, 10 ms, factor 1.0, jitter 0.1).
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TypeVar

import tenacity

from kubectrl._internal.clock import Clock, RealClock
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
    from ``initial_backoff`` up to ``max_backoff``, each drawn between half and all of that
    ceiling (jitter), except when the failure carries the server's ``Retry-After`` (a 429, or a
    5xx that is retried), which waits what the server asked (at most ``max_retry_after``).
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
        if isinstance(err, APIError) and err.retry_after is not None:
            return float(min(err.retry_after, self.max_retry_after))
        ceiling = min(self.max_backoff, self.initial_backoff * (2.0 ** (attempt - 1)))
        return float(ceiling / 2 + random.random() * ceiling / 2)  # noqa: S311 - jitter

    async def call(
        self, attempt: Callable[[], Awaitable[T]], *, idempotent: bool, clock: Clock
    ) -> T:
        """Run ``attempt`` until it succeeds, the policy says stop, or attempts run out.

        tenacity drives the attempts and sleeps on ``clock``. The error of the last attempt is
        raised as itself, with the traceback it had when the attempt raised it and its own cause
        (the transport error under an :class:`APIConnectionError`): nothing of the retry
        machinery is chained to it or in its traceback (a 404 after a retried 500 reads as a
        plain 404).

        Example::

            obj = await RetryPolicy().call(fetch, idempotent=True, clock=RealClock())
        """
        # The first attempt runs as is: most requests succeed at once, and tenacity's bookkeeping
        # costs some 20 us per call (about 1% of a writing controller's CPU). A failure is handed
        # to tenacity as its attempt 1 (retry_after), so every retry decision is still tenacity's.
        try:
            return await attempt()
        except Exception as err:
            failed = err
        return await retry_after(self, failed, attempt, idempotent=idempotent, clock=clock)


async def retry_after(
    policy: RetryPolicy,
    failed: Exception,
    attempt: Callable[[], Awaitable[T]],
    *,
    idempotent: bool,
    clock: Clock,
) -> T:
    """:meth:`RetryPolicy.call` after its first attempt failed with ``failed``: the attempts
    ``policy`` still allows, the last error raised as :meth:`RetryPolicy.call` raises it. The
    request pipeline runs the first attempt itself (kubectrl.client._pipeline)."""
    # The traceback of the last failure as the attempt raised it: tenacity re-raises the
    # exception from its own frames, which would otherwise be prepended to it.
    last: list[tuple[BaseException, TracebackType | None]] = [(failed, failed.__traceback__)]
    replay = True

    async def tracked() -> T:
        nonlocal replay
        if replay:
            replay = False
            raise last[0][0]
        try:
            return await attempt()
        except Exception as err:
            last[:] = [(err, err.__traceback__)]
            raise

    def retry(state: tenacity.RetryCallState) -> bool:
        err = state.outcome.exception() if state.outcome is not None else None
        return isinstance(err, Exception) and policy.should_retry(err, idempotent=idempotent)

    def wait(state: tenacity.RetryCallState) -> float:
        err = state.outcome.exception() if state.outcome is not None else None
        return policy.wait_for(err, state.attempt_number)

    # A controller per call: tenacity keeps a call's state on the controller (per thread),
    # and the requests of one event loop share a thread.
    controller = tenacity.AsyncRetrying(
        stop=tenacity.stop_after_attempt(max(1, policy.max_attempts)),
        retry=retry,
        wait=wait,
        sleep=clock.sleep,
        reraise=True,
    )
    try:
        return await controller(tracked)
    except Exception as err:
        # Re-raised as the same object: no __context__ is added; `from` keeps its own cause
        # and suppresses any context, so a log shows no "During handling..." chain.
        if last and last[0][0] is err:
            err = err.with_traceback(last[0][1])
        raise err from err.__cause__
    finally:
        last.clear()  # the traceback refers to tracked's frame, which refers to `last`
