"""Reconcile outcomes through a Manager: backoff on errors, terminal errors, requeue_after."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kubectrl.client import AsyncClient
from kubectrl.runtime import Request, Result, TerminalError
from kubectrl.runtime._builder import Builder
from kubectrl.runtime._manager import Manager

from .conftest import eventually, http_get, start_in_background, wait_synced

pytestmark = pytest.mark.integration

CM = ("v1", "ConfigMap")


def cm(namespace: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
    }


def sample(registry: Any, metric: str, **labels: str) -> float:
    value = registry.get_sample_value(metric, labels)
    return float(value or 0.0)


async def test_errors_backoff_terminal_and_requeue_after(
    managers: Callable[..., Manager], api: AsyncClient, namespace: str
) -> None:
    manager = managers()
    calls: dict[str, int] = {}
    requeues_seen: list[int] = []

    async def reconcile(request: Request) -> Result | None:
        calls[request.name] = calls.get(request.name, 0) + 1
        if request.name == "flaky":
            requeues_seen.append(controller.queue.num_requeues(request))
            if calls["flaky"] <= 4:
                raise RuntimeError("not yet")
        if request.name == "terminal":
            raise TerminalError("will never work")
        if request.name == "later" and calls["later"] == 1:
            return Result(requeue_after=0.2)
        return None

    controller = Builder(manager).for_(CM).named("outcomes").complete(reconcile)
    task = start_in_background(manager)
    await wait_synced(manager, task)
    registry = manager.registry

    # Exceptions: rate-limited requeue, the per-key failure count grows (so does the backoff,
    # which the rate limiter derives from it); success forgets the key.
    await api.create(cm(namespace, "flaky"))
    await eventually(lambda: calls.get("flaky", 0) == 5, what="flaky reconciled 5 times")
    flaky = Request(namespace, "flaky")
    await eventually(lambda: controller.queue.num_requeues(flaky) == 0, what="flaky forgotten")
    assert requeues_seen == [0, 1, 2, 3, 4]
    assert (
        sample(
            registry, "controller_runtime_reconcile_total", controller="outcomes", result="error"
        )
        == 4
    )
    assert sample(registry, "controller_runtime_reconcile_errors_total", controller="outcomes") == 4
    assert sample(registry, "workqueue_retries_total", name="outcomes", controller="outcomes") >= 4

    # TerminalError: counted, forgotten, not retried.
    await api.create(cm(namespace, "terminal"))
    await eventually(
        lambda: (
            sample(
                registry,
                "controller_runtime_terminal_reconcile_errors_total",
                controller="outcomes",
            )
            == 1
        ),
        what="terminal error counted",
    )
    # A later key is processed after it: the queue would have had time to retry "terminal".
    await api.create(cm(namespace, "marker"))
    await eventually(lambda: calls.get("marker", 0) >= 1, what="marker reconciled")
    assert controller.queue.num_requeues(Request(namespace, "terminal")) == 0
    assert calls["terminal"] == 1

    # requeue_after brings the key back without any change to the object.
    await api.create(cm(namespace, "later"))
    await eventually(lambda: calls.get("later", 0) >= 2, what="requeue_after came back")
    assert (
        sample(
            registry,
            "controller_runtime_reconcile_total",
            controller="outcomes",
            result="requeue_after",
        )
        == 1
    )

    # /metrics serves controller-runtime's and the workqueue's series with the right labels.
    status, text = await http_get(manager.metrics_port, "/metrics")
    assert status == 200
    samples = {
        (s.name, tuple(sorted(s.labels.items())))
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    assert (
        "controller_runtime_reconcile_total",
        (("controller", "outcomes"), ("result", "success")),
    ) in samples
    assert ("workqueue_depth", (("controller", "outcomes"), ("name", "outcomes"))) in samples
    assert calls["terminal"] == 1
