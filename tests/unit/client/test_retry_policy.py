"""RetryPolicy on tenacity: what is retried, how long it waits on the injected clock, how many
attempts, and what the caller finally sees. Nothing here sleeps: waits go through a FakeClock."""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from client_loopback import CONFIGMAPS, Request, json_response, loopback

from kubectrl import FakeClock
from kubectrl.client import AsyncClient, ClientConfig, RateLimit, RetryPolicy
from kubectrl.errors import (
    APIConnectionError,
    InternalError,
    NotFoundError,
    ServiceUnavailableError,
    api_error_from_status,
)


def status(code: int, reason: str, retry_after: float | None = None) -> Exception:
    return api_error_from_status(
        {"kind": "Status", "code": code, "reason": reason}, retry_after=retry_after
    )


async def run_on_clock(clock: FakeClock, coro: Awaitable[Any]) -> tuple[Any, list[float]]:
    """Run ``coro`` to its end, advancing ``clock`` past each sleep; returns its result (or
    raises its error) and the waits it asked for, in order."""
    task = asyncio.ensure_future(coro)
    waits: list[float] = []
    while not task.done():
        await asyncio.sleep(0)
        deadline = clock.next_deadline()
        if deadline is not None:
            waits.append(deadline - clock.now())
            clock.set(deadline)
    return task.result(), waits


def failing(
    *errors: Exception, then: object = "ok"
) -> tuple[Callable[[], Awaitable[Any]], list[int]]:
    """An attempt that raises ``errors`` one per call, then returns ``then``; and its call log."""
    calls: list[int] = []

    async def attempt() -> object:
        calls.append(len(calls) + 1)
        if len(calls) <= len(errors):
            raise errors[len(calls) - 1]
        return then

    return attempt, calls


async def test_attempts_are_counted_and_bounded_with_exponential_jittered_waits() -> None:
    clock = FakeClock()
    policy = RetryPolicy(max_attempts=4, initial_backoff=0.2, max_backoff=0.5)
    attempt, calls = failing(*[status(500, "InternalError") for _ in range(10)])
    with pytest.raises(InternalError):
        await run_on_clock(clock, policy.call(attempt, idempotent=True, clock=clock))
    assert calls == [1, 2, 3, 4]
    # The waits that were asked for are on the clock: [c/2, c] for c = 0.2, 0.4, then the cap.
    attempt, calls = failing(*[status(500, "InternalError") for _ in range(3)])
    result, waits = await run_on_clock(clock, policy.call(attempt, idempotent=True, clock=clock))
    assert result == "ok"
    assert calls == [1, 2, 3, 4]
    assert len(waits) == 3
    for wait, ceiling in zip(waits, [0.2, 0.4, 0.5], strict=True):
        assert ceiling / 2 <= wait <= ceiling


async def test_max_attempts_one_sends_once() -> None:
    clock = FakeClock()
    attempt, calls = failing(status(503, "ServiceUnavailable"))
    with pytest.raises(ServiceUnavailableError):
        await RetryPolicy(max_attempts=1).call(attempt, idempotent=True, clock=clock)
    assert calls == [1]


@pytest.mark.parametrize(
    ("error", "retried"),
    [
        (status(500, "InternalError"), False),
        (status(503, "ServiceUnavailable", retry_after=1), False),
        (APIConnectionError("connection reset"), False),
        (status(429, "TooManyRequests"), True),
        (APIConnectionError("refused", connect_failed=True), True),
    ],
)
async def test_non_idempotent_requests_retry_only_what_never_reached_the_server(
    error: Exception, retried: bool
) -> None:
    clock = FakeClock()
    attempt, calls = failing(error)
    if retried:
        result, _ = await run_on_clock(
            clock, RetryPolicy().call(attempt, idempotent=False, clock=clock)
        )
        assert result == "ok"
        assert calls == [1, 2]
    else:
        with pytest.raises(type(error)):
            await RetryPolicy().call(attempt, idempotent=False, clock=clock)
        assert calls == [1]


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (status(429, "TooManyRequests", retry_after=7), 7.0),
        (status(503, "ServiceUnavailable", retry_after=3), 3.0),
        (status(500, "InternalError", retry_after=0), 0.0),
        (status(429, "TooManyRequests", retry_after=3600), 60.0),  # capped: max_retry_after
    ],
)
async def test_retry_after_is_waited_on_the_clock(error: Exception, expected: float) -> None:
    clock = FakeClock()
    attempt, calls = failing(error)
    started = clock.now()
    result, waits = await run_on_clock(
        clock, RetryPolicy().call(attempt, idempotent=True, clock=clock)
    )
    assert result == "ok"
    assert calls == [1, 2]
    assert waits == ([pytest.approx(expected)] if expected else [])
    assert clock.now() - started == pytest.approx(expected)


async def test_last_error_is_raised_unchained_with_the_attempts_own_traceback() -> None:
    clock = FakeClock()
    attempt, calls = failing(status(500, "InternalError"), status(404, "NotFound"))
    with pytest.raises(NotFoundError) as info:
        await run_on_clock(clock, RetryPolicy().call(attempt, idempotent=True, clock=clock))
    assert calls == [1, 2]
    err = info.value
    assert err.__cause__ is None
    assert err.__suppress_context__
    assert err.__context__ is None
    printed = "".join(traceback.format_exception(err))
    assert "in attempt" in printed  # the frame that raised it
    assert "During handling" not in printed
    assert "tenacity" not in printed
    assert "RetryError" not in printed


async def test_exhausted_retries_raise_the_last_attempts_error_with_its_own_cause() -> None:
    """A connection error keeps the transport error it was raised from (its own cause), and
    nothing else: no RetryError, no earlier attempt's error."""
    clock = FakeClock()

    def lost(n: int) -> APIConnectionError:
        try:
            raise ConnectionResetError(f"reset {n}")
        except ConnectionResetError as low:
            try:
                raise APIConnectionError(f"connection lost {n}") from low
            except APIConnectionError as err:
                return err

    attempt, calls = failing(*[lost(n) for n in range(1, 4)])
    with pytest.raises(APIConnectionError, match="connection lost 3") as info:
        await run_on_clock(
            clock, RetryPolicy(max_attempts=3).call(attempt, idempotent=True, clock=clock)
        )
    assert calls == [1, 2, 3]
    err = info.value
    assert isinstance(err.__cause__, ConnectionResetError)
    assert str(err.__cause__) == "reset 3"
    assert err.__suppress_context__
    printed = "".join(traceback.format_exception(err))
    assert "tenacity" not in printed
    assert "reset 2" not in printed


async def test_cancellation_while_waiting_propagates() -> None:
    clock = FakeClock()
    attempt, calls = failing(status(429, "TooManyRequests", retry_after=5))
    task = asyncio.ensure_future(RetryPolicy().call(attempt, idempotent=True, clock=clock))
    while clock.sleepers() == 0:  # noqa: ASYNC110 - until the retry sleeps on the clock
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert calls == [1]


def _answer(code: int, headers: dict[str, str] | None = None) -> bytes:
    reasons = {200: "", 429: "TooManyRequests", 503: "ServiceUnavailable"}
    if code == 200:
        return json_response(200, {"kind": "ConfigMap", "metadata": {"name": "a"}})
    return json_response(code, {"kind": "Status", "code": code, "reason": reasons[code]}, headers)


async def test_client_waits_a_503s_retry_after_on_its_clock_and_takes_a_token_per_attempt() -> None:
    answers = [_answer(503, {"Retry-After": "4"}), _answer(200)]

    async def handler(request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(answers.pop(0))
        await writer.drain()

    clock = FakeClock()
    async with loopback(handler) as server:
        # A bucket of one token that refills in 10 s of the fake clock: the second attempt waits
        # for its token after the Retry-After (4 s), so the total is 10 s, not 4 s.
        config = ClientConfig(server=server.url).with_options(
            rate_limit=RateLimit(qps=0.1, burst=1)
        )
        client = AsyncClient(config, clock=clock)
        try:
            task = asyncio.ensure_future(client.get(CONFIGMAPS, "a", namespace="ns"))
            waits: list[float] = []
            while not task.done():
                await asyncio.sleep(0.001)
                deadline = clock.next_deadline()
                if deadline is not None:
                    waits.append(deadline - clock.now())
                    clock.set(deadline)
            obj = task.result()
        finally:
            await client.aclose()
    assert obj["metadata"]["name"] == "a"
    assert len(server.requests) == 2
    assert waits == [pytest.approx(4.0), pytest.approx(6.0)]


@pytest.mark.parametrize(
    ("method", "call"),
    [
        ("POST", lambda c: c.create(_body(), namespace="ns")),
        (
            "PUT",
            lambda c: c.update(
                {**_body(), "metadata": {"name": "a", "resourceVersion": "1"}}, namespace="ns"
            ),
        ),
        ("DELETE", lambda c: c.delete(CONFIGMAPS, "a", namespace="ns")),
        ("PATCH", lambda c: c.patch(CONFIGMAPS, "a", {"data": {}}, namespace="ns")),
    ],
)
async def test_client_does_not_retry_a_5xx_of_a_non_idempotent_verb(
    make_client: Callable[..., AsyncClient],
    method: str,
    call: Callable[[AsyncClient], Awaitable[Any]],
) -> None:
    async def handler(request: Request, writer: asyncio.StreamWriter) -> None:
        if request.target == "/api/v1":
            writer.write(json_response(200, _DISCOVERY))
        else:
            writer.write(_answer(503, {"Retry-After": "0"}))
        await writer.drain()

    async with loopback(handler) as server:
        client = make_client(server.url)
        try:
            with pytest.raises(ServiceUnavailableError):
                await call(client)
        finally:
            await client.aclose()
    assert [r.method for r in server.requests if r.target != "/api/v1"] == [method]


async def test_client_retries_a_429_of_a_create_and_an_apply_5xx(
    make_client: Callable[..., AsyncClient],
) -> None:
    answers = {"POST": [_answer(429, {"Retry-After": "0"})], "PATCH": [_answer(503)]}

    async def handler(request: Request, writer: asyncio.StreamWriter) -> None:
        if request.target == "/api/v1":
            writer.write(json_response(200, _DISCOVERY))
        elif answers[request.method]:
            writer.write(answers[request.method].pop(0))
        else:
            writer.write(_answer(200))
        await writer.drain()

    async with loopback(handler) as server:
        client = make_client(server.url, retry=RetryPolicy(initial_backoff=0.0))
        try:
            await client.create(_body(), namespace="ns")
            await client.apply(_body(), namespace="ns", field_manager="test")
        finally:
            await client.aclose()
    assert [r.method for r in server.requests if r.target != "/api/v1"] == [
        "POST",
        "POST",
        "PATCH",
        "PATCH",
    ]


def _body() -> dict[str, Any]:
    # A fresh body per write: a write refreshes the dict it is given with the server's answer.
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}


_DISCOVERY = {
    "kind": "APIResourceList",
    "groupVersion": "v1",
    "resources": [{"name": "configmaps", "kind": "ConfigMap", "namespaced": True}],
}
