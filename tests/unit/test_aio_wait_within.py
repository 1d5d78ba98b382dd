"""kubectrl._internal.aio.wait_within: a bounded wait that never loses its caller's cancellation.

On Python 3.10 and 3.11, ``asyncio.wait_for`` returns the awaited result when that result and a
cancellation of the caller arrive in the same loop iteration (CPython gh-86296; 3.12 rewrote
``wait_for`` on ``asyncio.timeout``). A watch opened at that moment was then read until the
server closed it, and ``Informer.stop()`` waited for minutes.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kubectrl._internal.aio import wait_within

Bounded = Callable[[Awaitable[Any], float], Awaitable[Any]]


async def _cancel_as_the_result_arrives(bounded: Bounded) -> asyncio.Task[Any]:
    loop = asyncio.get_running_loop()
    result: asyncio.Future[str] = loop.create_future()

    async def operation() -> str:
        return await result

    outer = asyncio.ensure_future(bounded(operation(), 30))
    for _ in range(3):  # let the outer task reach its wait and the operation its await
        await asyncio.sleep(0)
    result.set_result("response")  # the operation finishes in the next iteration ...
    outer.cancel()  # ... and the caller is cancelled in the same one
    await asyncio.wait({outer})
    return outer


async def test_a_cancellation_that_races_the_result_propagates() -> None:
    outer = await _cancel_as_the_result_arrives(wait_within)
    assert outer.cancelled()


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12's wait_for keeps the cancellation")
async def test_asyncio_wait_for_loses_that_cancellation_here() -> None:
    """The defect wait_within exists for, shown on this interpreter."""
    outer = await _cancel_as_the_result_arrives(asyncio.wait_for)
    assert not outer.cancelled()
    assert outer.result() == "response"


async def test_the_result_of_a_cancelled_wait_is_discarded() -> None:
    discarded: list[str] = []

    async def discard(value: str) -> None:
        discarded.append(value)

    outer = await _cancel_as_the_result_arrives(
        lambda aw, timeout: wait_within(aw, timeout, discard=discard)
    )
    assert outer.cancelled()
    assert discarded == ["response"]


async def test_timeout_cancels_the_operation() -> None:
    cancelled = asyncio.Event()

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    with pytest.raises(asyncio.TimeoutError):
        await wait_within(forever(), 0.01)
    assert cancelled.is_set()


async def test_result_and_error_pass_through() -> None:
    async def value() -> int:
        return 7

    async def boom() -> None:
        raise ValueError("boom")

    assert await wait_within(value(), None) == 7
    with pytest.raises(ValueError, match="boom"):
        await wait_within(boom(), 5)
