"""A startup hook that raises ``TemporaryError`` is called again after its delay, with ``retry``
counting the tries, before any handler runs.

Upstream: kopf runs startup activities through its handler execution
(``kopf/_core/engines/activities.py``, ``run_activity`` -> ``execute_handlers_once`` in
``kopf/_core/actions/execution.py``): a ``TemporaryError`` retries after its ``delay``, and
kopf's ``examples/13-hooks`` relies on it (``startup_fn_retried``).
"""

from __future__ import annotations

from typing import Any

from kubectrl._internal.clock import FakeClock
from kubectrl.client import AsyncClient
from kubectrl.operator import Operator, TemporaryError
from kubectrl.testing import FakeAPI, eventually, run_manager

from .conftest import CM, configmap, new_manager


async def test_a_startup_hook_is_retried_after_a_temporary_error(
    api: FakeAPI, clock: FakeClock, client: AsyncClient
) -> None:
    manager = new_manager(api, clock)
    operator = Operator(manager)
    order: list[Any] = []

    @operator.on_startup()
    async def connect(retry: int, **_: Any) -> None:
        order.append(("startup", retry, clock.now()))
        if retry < 2:
            raise TemporaryError("not yet", delay=5)

    @operator.on_create(CM)
    def created(name: str, **_: Any) -> None:
        order.append(f"create {name}")

    await client.create(configmap("a"))
    start = clock.now()
    async with run_manager(manager):
        await eventually(lambda: "create a" in order, 30, clock=clock, interval=1)
    tries = [entry for entry in order if entry != "create a"]
    assert [retry for _, retry, _ in tries] == [0, 1, 2]
    assert [when - start >= 5 * retry for _, retry, when in tries] == [True, True, True]
    assert order[-1] == "create a"
