"""Metrics hooks: controller-runtime's names and labels, named queues only."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from prometheus_client import CollectorRegistry

from kubectrl._internal.clock import FakeClock
from kubectrl.workqueue import (
    CounterMetric,
    GaugeMetric,
    HistogramMetric,
    NoopMetricsProvider,
    PrometheusMetricsProvider,
    Queue,
    RateLimitingQueue,
)


class _Recorder:
    def __init__(self) -> None:
        self.value = 0.0
        self.observations: list[float] = []

    def inc(self) -> None:
        self.value += 1

    def dec(self) -> None:
        self.value -= 1

    def observe(self, amount: float) -> None:
        self.observations.append(amount)


class FakeProvider:
    def __init__(self) -> None:
        self.names: list[str] = []
        self.depth = _Recorder()
        self.adds = _Recorder()
        self.latency = _Recorder()
        self.work = _Recorder()
        self.retries = _Recorder()
        self.unfinished: Callable[[], float] = lambda: -1.0
        self.longest: Callable[[], float] = lambda: -1.0

    def new_depth_metric(self, name: str) -> GaugeMetric:
        self.names.append(name)
        return self.depth

    def new_adds_metric(self, name: str) -> CounterMetric:
        return self.adds

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return self.latency

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return self.work

    def new_unfinished_work_seconds_metric(self, name: str, observe: Callable[[], float]) -> None:
        self.unfinished = observe

    def new_longest_running_processor_seconds_metric(
        self, name: str, observe: Callable[[], float]
    ) -> None:
        self.longest = observe

    def new_retries_metric(self, name: str) -> CounterMetric:
        return self.retries


def test_metrics_follow_client_go_bookkeeping() -> None:
    clock = FakeClock()
    provider = FakeProvider()
    queue: RateLimitingQueue[str] = RateLimitingQueue(
        name="foos", clock=clock, metrics_provider=provider
    )
    assert provider.names == ["foos"]
    queue.add("a")
    queue.add("a")  # deduplicated: not an add
    queue.add("b")
    assert (provider.adds.value, provider.depth.value) == (2, 2)
    clock.advance(2.0)
    queue.get_blocking()
    assert provider.depth.value == 1
    assert provider.latency.observations == [2.0]
    clock.advance(1.0)
    queue.get_blocking()
    assert provider.latency.observations == [2.0, 3.0]
    clock.advance(4.0)
    assert provider.unfinished() == pytest.approx(4.0 + 5.0)
    assert provider.longest() == pytest.approx(5.0)
    queue.done("a")
    assert provider.work.observations == [5.0]
    assert provider.longest() == pytest.approx(4.0)
    queue.done("b")
    assert provider.unfinished() == provider.longest() == 0.0
    queue.add_rate_limited("a")
    queue.add_after("b", 1.0)
    assert provider.retries.value == 2


def test_unnamed_queue_reports_nothing() -> None:
    provider = FakeProvider()
    queue: Queue[str] = Queue(metrics_provider=provider)
    queue.add("a")
    assert provider.names == []
    assert provider.adds.value == 0


def test_noop_provider_skips_bookkeeping() -> None:
    queue: Queue[str] = Queue(name="foos", metrics_provider=NoopMetricsProvider())
    assert queue._metrics is None
    assert repr(NoopMetricsProvider()) == "NoopMetricsProvider()"


def test_observe_functions_outlive_the_queue() -> None:
    provider = FakeProvider()
    queue: Queue[str] = Queue(name="foos", metrics_provider=provider)
    queue.add("a")
    queue.get_blocking()
    del queue
    assert provider.unfinished() == 0.0
    assert provider.longest() == 0.0


def test_provider_and_registry_are_exclusive() -> None:
    with pytest.raises(ValueError, match="not both"):
        Queue(name="x", metrics_provider=FakeProvider(), registry=CollectorRegistry())


def test_prometheus_export_uses_controller_runtime_names() -> None:
    clock = FakeClock()
    registry = CollectorRegistry()
    foos: RateLimitingQueue[str] = RateLimitingQueue(name="foos", clock=clock, registry=registry)
    bars: Queue[str] = Queue(name="bars", clock=clock, registry=registry)  # same registry: fine
    labels = {"name": "foos", "controller": "foos"}
    foos.add("a")
    foos.add("b")
    bars.add("z")
    clock.advance(0.5)
    foos.get_blocking()
    clock.advance(3.0)

    def sample(name: str, **extra: str) -> float | None:
        return registry.get_sample_value(name, {**labels, **extra})

    assert sample("workqueue_depth") == 1
    assert sample("workqueue_adds_total") == 2
    assert sample("workqueue_queue_duration_seconds_count") == 1
    assert sample("workqueue_queue_duration_seconds_bucket", le="1.0") == 1
    assert sample("workqueue_unfinished_work_seconds") == pytest.approx(3.0)
    assert sample("workqueue_longest_running_processor_seconds") == pytest.approx(3.0)
    foos.done("a")
    assert sample("workqueue_work_duration_seconds_sum") == pytest.approx(3.0)
    foos.add_rate_limited("a")
    assert sample("workqueue_retries_total") == 1
    assert registry.get_sample_value("workqueue_depth", {"name": "bars", "controller": "bars"})
    provider = PrometheusMetricsProvider.for_registry(registry)
    assert provider is PrometheusMetricsProvider.for_registry(registry)
    # controller-runtime's buckets: 10 ns to 1000 s, a factor of ten apart.
    assert sample("workqueue_work_duration_seconds_bucket", le="1e-08") == 0
    assert sample("workqueue_work_duration_seconds_bucket", le="1000.0") == 1
