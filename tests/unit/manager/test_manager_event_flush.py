"""On shutdown, events are flushed for at most ``event_flush_timeout`` (issue 16, defect 16)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any

import pytest

from kubectrl.client import ClientConfig
from kubectrl.runtime._manager import Manager, ManagerOptions

CONFIG = ClientConfig(server="https://127.0.0.1:9")  # nothing listens: no request is made


class HangingSink:
    def __init__(self) -> None:
        self.calls = 0
        self.cancelled = False

    async def create(self, event: Mapping[str, Any]) -> dict[str, Any]:
        self.calls += 1
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return dict(event)

    async def patch(self, event: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
        return await self.create(event)


def test_event_flush_timeout_is_validated_and_defaults_to_5_s() -> None:
    assert ManagerOptions().event_flush_timeout == 5.0
    with pytest.raises(ValueError, match="event_flush_timeout"):
        ManagerOptions(event_flush_timeout=-1)


async def test_a_broadcaster_that_cannot_write_is_dropped_after_the_flush_bound(
    caplog: pytest.LogCaptureFixture,
) -> None:
    manager = Manager(
        CONFIG,
        options=ManagerOptions(
            metrics_bind_address="0",
            health_probe_bind_address="0",
            graceful_shutdown_timeout=60,
            event_flush_timeout=0.2,
        ),
    )
    recorder = manager.event_recorder("t")
    sink = HangingSink()
    manager._broadcasters["events.k8s.io/v1"]._sink = sink
    task = asyncio.ensure_future(manager.start())
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "n"}}
    recorder.event(obj, "Normal", "One", "one")
    recorder.event(obj, "Normal", "Two", "two")
    end = time.monotonic() + 10
    while sink.calls == 0:
        assert time.monotonic() < end, "the broadcaster never tried to write"
        await asyncio.sleep(0.01)
    manager.stop()
    with caplog.at_level(logging.WARNING, logger="kubectrl.events"):
        # The bound is 0.2 s; 10 s is only how long this test waits before failing.
        await asyncio.wait_for(task, 10)
    assert sink.cancelled
    assert "2 events not written within the shutdown timeout of 0.2 s" in caplog.text
