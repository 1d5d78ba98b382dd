"""Rate limiter and retry policies on the fake clock: nothing here sleeps."""

from __future__ import annotations

import asyncio
import random

import pytest
from client_loopback import CONFIGMAPS, Request, json_response, loopback

from kubectrl import FakeClock
from kubectrl.client import (
    DEFAULT_RETRY,
    AsyncClient,
    Backoff,
    ClientConfig,
    RetryPolicy,
    TokenBucketRateLimiter,
    retry_on_conflict,
    retry_on_conflict_blocking,
)
from kubectrl.errors import (
    APIConnectionError,
    ConflictError,
    InternalError,
    NotFoundError,
    TooManyRequestsError,
    api_error_from_status,
)


def conflict() -> ConflictError:
    err = api_error_from_status({"kind": "Status", "code": 409, "reason": "Conflict"})
    assert isinstance(err, ConflictError)
    return err


def test_bucket_starts_full_then_paces_at_qps() -> None:
    clock = FakeClock()
    limiter = TokenBucketRateLimiter(qps=20, burst=30, clock=clock)
    delays = [limiter.reserve() for _ in range(32)]
    assert delays[:30] == [0.0] * 30
    assert delays[30] == pytest.approx(0.05)
    assert delays[31] == pytest.approx(0.10)


def test_bucket_refills_with_time_up_to_burst() -> None:
    clock = FakeClock()
    limiter = TokenBucketRateLimiter(qps=10, burst=5, clock=clock)
    for _ in range(5):
        assert limiter.try_acquire()
    assert not limiter.try_acquire()
    clock.advance(0.1)
    assert limiter.try_acquire()
    clock.advance(100)
    assert limiter.tokens == pytest.approx(5)


async def test_acquire_waits_on_the_clock() -> None:
    clock = FakeClock()
    limiter = TokenBucketRateLimiter(qps=1, burst=1, clock=clock)
    await limiter.acquire()
    waiter = asyncio.ensure_future(limiter.acquire())
    while clock.sleepers() == 0:  # noqa: ASYNC110 - yield until the waiter sleeps on the clock
        await asyncio.sleep(0)
    assert not waiter.done()
    assert clock.next_deadline() == pytest.approx(clock.now() + 1.0)
    clock.advance(1.0)
    await asyncio.wait_for(waiter, 5)


def test_invalid_limits_are_rejected() -> None:
    with pytest.raises(ValueError, match="qps"):
        TokenBucketRateLimiter(qps=0)
    with pytest.raises(ValueError, match="burst"):
        TokenBucketRateLimiter(qps=1, burst=0)


def test_default_retry_matches_client_go() -> None:
    assert Backoff(steps=5, duration=0.01, factor=1.0, jitter=0.1) == DEFAULT_RETRY
    delays = DEFAULT_RETRY.delays(random.Random(1))
    assert len(delays) == 4
    assert all(0.01 <= d <= 0.011 for d in delays)


async def test_retry_on_conflict_retries_conflicts_only_and_is_bounded() -> None:
    clock = FakeClock()
    calls = 0

    async def flaky() -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise conflict()
        return "ok"

    task = asyncio.ensure_future(retry_on_conflict(flaky, clock=clock))
    while not task.done():
        await asyncio.sleep(0)
        if clock.sleepers():
            clock.advance(0.011)
    assert task.result() == "ok"
    assert calls == 3

    calls = 0

    async def always() -> str:
        nonlocal calls
        calls += 1
        raise conflict()

    task = asyncio.ensure_future(retry_on_conflict(always, clock=clock))
    while not task.done():
        await asyncio.sleep(0)
        if clock.sleepers():
            clock.advance(0.011)
    with pytest.raises(ConflictError):
        task.result()
    assert calls == 5

    async def missing() -> str:
        raise api_error_from_status({"kind": "Status", "code": 404, "reason": "NotFound"})

    with pytest.raises(NotFoundError):
        await retry_on_conflict(missing, clock=clock)


def test_blocking_retry_on_conflict() -> None:
    calls = []

    def flaky() -> int:
        calls.append(1)
        if len(calls) < 2:
            raise conflict()
        return 7

    assert retry_on_conflict_blocking(flaky, sleep=lambda _: None) == 7


def test_policy_decisions() -> None:
    policy = RetryPolicy()
    throttled = api_error_from_status({"kind": "Status", "code": 429, "reason": "TooManyRequests"})
    internal = api_error_from_status({"kind": "Status", "code": 500, "reason": "InternalError"})
    assert policy.should_retry(throttled, idempotent=False)
    assert policy.should_retry(internal, idempotent=True)
    assert not policy.should_retry(internal, idempotent=False)
    assert not policy.should_retry(conflict(), idempotent=True)
    assert policy.should_retry(APIConnectionError("x", connect_failed=True), idempotent=False)
    assert not policy.should_retry(APIConnectionError("reset"), idempotent=False)
    assert policy.should_retry(APIConnectionError("reset"), idempotent=True)
    assert isinstance(throttled, TooManyRequestsError)
    throttled.retry_after = 2.5
    assert policy.wait_for(throttled, 1) == 2.5
    for attempt in range(1, 10):
        assert 0 < policy.wait_for(internal, attempt) <= policy.max_backoff


async def test_429_is_retried_after_retry_after_on_the_clock() -> None:
    answers = [
        json_response(
            429, {"kind": "Status", "code": 429, "reason": "TooManyRequests"}, {"Retry-After": "2"}
        ),
        json_response(200, {"kind": "ConfigMap", "metadata": {"name": "a"}}),
    ]

    async def handler(request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(answers.pop(0))
        await writer.drain()

    clock = FakeClock()
    async with loopback(handler) as server:
        client = AsyncClient(ClientConfig(server=server.url), clock=clock)
        try:
            task = asyncio.ensure_future(client.get(CONFIGMAPS, "a", namespace="ns"))
            while clock.sleepers() == 0:  # noqa: ASYNC110 - until the retry sleeps on the clock
                await asyncio.sleep(0.001)
            assert clock.next_deadline() == pytest.approx(clock.now() + 2.0)
            clock.advance(2.0)
            obj = await asyncio.wait_for(task, 5)
            assert obj["metadata"]["name"] == "a"
            assert len(server.requests) == 2
        finally:
            await client.aclose()


async def test_500_on_create_is_not_retried(make_client) -> None:
    discovery = {
        "kind": "APIResourceList",
        "groupVersion": "v1",
        "resources": [{"name": "configmaps", "kind": "ConfigMap", "namespaced": True}],
    }

    async def handler(request: Request, writer: asyncio.StreamWriter) -> None:
        if request.target == "/api/v1":
            writer.write(json_response(200, discovery))
        else:
            writer.write(json_response(500, {"kind": "Status", "code": 500, "message": "boom"}))
        await writer.drain()

    async with loopback(handler) as server:
        client = make_client(server.url)
        try:
            body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}
            with pytest.raises(InternalError, match="boom"):
                await client.create(body, namespace="ns")
            assert [r.method for r in server.requests] == ["GET", "POST"]
        finally:
            await client.aclose()


def _chain(err: BaseException | None) -> list[BaseException]:
    out: list[BaseException] = []
    while err is not None and err not in out:
        out.append(err)
        err = err.__cause__ or err.__context__
    return out


async def test_api_error_after_retries_chains_no_retry_machinery(make_client) -> None:
    """A 404 that follows a retried 500 is raised as itself: nothing from the retry machinery
    (tenacity's RetryError, its frames) in its cause/context chain or its traceback."""
    answers = [
        json_response(500, {"kind": "Status", "code": 500, "reason": "InternalError"}),
        json_response(
            404,
            {"kind": "Status", "code": 404, "reason": "NotFound", "message": 'configmaps "a"'},
        ),
    ]

    async def handler(request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(answers.pop(0))
        await writer.drain()

    async with loopback(handler) as server:
        client = make_client(server.url, retry=RetryPolicy(initial_backoff=0.0))
        try:
            with pytest.raises(NotFoundError) as info:
                await client.get(CONFIGMAPS, "a", namespace="ns")
        finally:
            await client.aclose()
    assert len(server.requests) == 2
    err = info.value
    assert (err.verb, err.namespace, err.name, err.reason) == ("get", "ns", "a", "NotFound")
    for linked in _chain(err):
        assert not type(linked).__module__.startswith("tenacity"), linked
        tb = linked.__traceback__
        while tb is not None:
            assert "tenacity" not in tb.tb_frame.f_code.co_filename, tb.tb_frame.f_code
            tb = tb.tb_next
