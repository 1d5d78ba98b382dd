"""A ``def`` reconciler that raises: the controller retrieves the error, asyncio has nothing to
report.

asyncio logs "Future exception was never retrieved" when a future holding an exception is
garbage-collected unread. The controller waits for a sync reconcile's future; nothing it
creates for that wait may be left holding the reconciler's exception.
"""

from __future__ import annotations

import asyncio
import gc
from typing import Any

from kubectrl.runtime import Controller, Request
from kubectrl.testing import eventually

R = Request("ns", "a")


async def test_a_raising_def_reconciler_leaves_no_unretrieved_future() -> None:
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    calls = 0

    def rec(request: Request) -> None:
        nonlocal calls
        calls += 1
        raise RuntimeError(f"failure {calls}")

    try:
        c = Controller("sync-raises", rec)
        await c.start()
        c.enqueue(R)
        await eventually(lambda: c.queue.num_requeues(R) >= 1)
        await c.stop()
        gc.collect()
        await asyncio.sleep(0)  # let a __del__-scheduled report reach the handler
    finally:
        loop.set_exception_handler(previous)
    messages = [str(context.get("message")) for context in reported]
    assert calls >= 1
    assert not [m for m in messages if "never retrieved" in m], messages
