"""call_in_loop and running_loop: waking an event loop from its own thread, another, or too late."""

from __future__ import annotations

import asyncio
import threading

import pytest

from kubectrl._internal.aio import call_in_loop, running_loop


def test_on_its_own_loop_the_call_happens_before_call_in_loop_returns() -> None:
    calls: list[tuple[str, int]] = []

    async def main() -> None:
        assert call_in_loop(asyncio.get_running_loop(), lambda a, b: calls.append((a, b)), "x", 1)
        assert calls == [("x", 1)]  # not merely scheduled

    asyncio.run(main())


def test_on_its_own_loop_an_exception_from_the_callback_reaches_the_caller() -> None:
    def boom() -> None:
        raise RuntimeError("from the callback")

    async def main() -> None:
        with pytest.raises(RuntimeError, match="from the callback"):
            call_in_loop(asyncio.get_running_loop(), boom)

    asyncio.run(main())


def test_from_another_thread_the_call_runs_on_the_loop_thread() -> None:
    ran_on: list[threading.Thread] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        done = asyncio.Event()
        scheduled: list[bool] = []

        def record() -> None:
            ran_on.append(threading.current_thread())
            done.set()

        thread = threading.Thread(target=lambda: scheduled.append(call_in_loop(loop, record)))
        thread.start()
        await asyncio.wait_for(done.wait(), timeout=30)
        thread.join(timeout=30)
        assert scheduled == [True]

    asyncio.run(main())
    assert ran_on == [threading.main_thread()]


def test_from_a_different_running_loop_the_call_is_scheduled_on_the_target() -> None:
    target = asyncio.new_event_loop()
    calls: list[str] = []
    try:

        async def other() -> bool:
            return call_in_loop(target, calls.append, "late")

        assert asyncio.run(other()) is True
        assert calls == []  # scheduled on target, which has not run yet
        target.run_until_complete(asyncio.sleep(0))
        assert calls == ["late"]
    finally:
        target.close()


def test_a_closed_loop_gets_nothing_and_says_so() -> None:
    loop = asyncio.new_event_loop()
    loop.close()
    calls: list[int] = []
    assert call_in_loop(loop, calls.append, 1) is False
    assert calls == []


def test_running_loop_is_the_loop_in_this_thread_or_none() -> None:
    assert running_loop() is None

    async def main() -> None:
        assert running_loop() is asyncio.get_running_loop()

    asyncio.run(main())
