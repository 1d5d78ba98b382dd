"""Workqueue metrics: a provider protocol, a no-op default and a Prometheus exporter.

The metric names, help texts, labels and histogram buckets are controller-runtime's
(``pkg/metrics/workqueue.go``), so dashboards and alerts written for Go controllers work
unchanged:

=============================================  =========  ====================================
name                                           type       meaning
=============================================  =========  ====================================
``workqueue_depth``                            gauge      items added and not yet handed out
``workqueue_adds_total``                       counter    adds that were not deduplicated
``workqueue_queue_duration_seconds``           histogram  first add to hand-out
``workqueue_work_duration_seconds``            histogram  hand-out to ``done``
``workqueue_unfinished_work_seconds``          gauge      summed age of items still in work
``workqueue_longest_running_processor_seconds`` gauge     age of the oldest item still in work
``workqueue_retries_total``                    counter    ``add_after`` / ``add_rate_limited``
=============================================  =========  ====================================

Every series carries the labels ``name`` and ``controller``, both set to the queue's name, as
controller-runtime does. Only named queues report.

Why the two "unfinished work" gauges take a callback: client-go runs a goroutine per queue that
recomputes them every 500 ms. A background thread or task per queue is costly in Python and needs
a running loop, so kubectrl instead hands the provider a function that computes the value on
demand; the Prometheus provider calls it at scrape time (``Gauge.set_function``), which is both
cheaper and always current, and OpenTelemetry's observable gauges work the same way.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, Protocol

from kubectrl._internal.clock import Clock

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = [
    "CounterMetric",
    "GaugeMetric",
    "HistogramMetric",
    "MetricsProvider",
    "NoopMetricsProvider",
    "PrometheusMetricsProvider",
]

# Ten nanoseconds to a thousand seconds, a factor of ten apart: controller-runtime's
# prometheus.ExponentialBuckets(10e-9, 10, 12).
DURATION_BUCKETS: tuple[float, ...] = tuple(10.0**exponent for exponent in range(-8, 4))


class CounterMetric(Protocol):
    """A monotonically increasing count (``workqueue_adds_total``, ``workqueue_retries_total``)."""

    def inc(self) -> None:
        """Add one."""
        ...


class GaugeMetric(Protocol):
    """A value that goes up and down (``workqueue_depth``)."""

    def inc(self) -> None:
        """Add one."""
        ...

    def dec(self) -> None:
        """Subtract one."""
        ...


class HistogramMetric(Protocol):
    """A distribution of durations in seconds."""

    def observe(self, amount: float) -> None:
        """Record one observation."""
        ...


class MetricsProvider(Protocol):
    """Makes the metrics of one named queue; the shape of client-go's ``MetricsProvider``.

    Each ``new_*`` method is called once, when a queue named ``name`` is created. The two
    unfinished-work gauges receive a thread-safe ``observe`` function that returns the current
    value in seconds; call it whenever the value is collected (see the module docstring for why).

    Caveats: methods are called with the queue's lock held, and the returned metrics are updated
    with it held, so they must not call back into the queue.

    Example::

        queue = RateLimitingQueue(name="foos", metrics_provider=MyOpenTelemetryProvider())
    """

    def new_depth_metric(self, name: str) -> GaugeMetric:
        """Gauge ``workqueue_depth``."""
        ...

    def new_adds_metric(self, name: str) -> CounterMetric:
        """Counter ``workqueue_adds_total``."""
        ...

    def new_latency_metric(self, name: str) -> HistogramMetric:
        """Histogram ``workqueue_queue_duration_seconds``."""
        ...

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        """Histogram ``workqueue_work_duration_seconds``."""
        ...

    def new_unfinished_work_seconds_metric(self, name: str, observe: Callable[[], float]) -> None:
        """Gauge ``workqueue_unfinished_work_seconds``, read through ``observe``."""
        ...

    def new_longest_running_processor_seconds_metric(
        self, name: str, observe: Callable[[], float]
    ) -> None:
        """Gauge ``workqueue_longest_running_processor_seconds``, read through ``observe``."""
        ...

    def new_retries_metric(self, name: str) -> CounterMetric:
        """Counter ``workqueue_retries_total``."""
        ...


class _NoopMetric:
    def inc(self) -> None:
        pass

    def dec(self) -> None:
        pass

    def observe(self, amount: float) -> None:
        pass


_NOOP_METRIC = _NoopMetric()


class NoopMetricsProvider(MetricsProvider):
    """A :class:`MetricsProvider` that records nothing; the default.

    Queues detect it and skip their metric bookkeeping entirely, so the default costs nothing.

    Example::

        queue = Queue(name="foos", metrics_provider=NoopMetricsProvider())
    """

    def new_depth_metric(self, name: str) -> GaugeMetric:
        return _NOOP_METRIC

    def new_adds_metric(self, name: str) -> CounterMetric:
        return _NOOP_METRIC

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return _NOOP_METRIC

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return _NOOP_METRIC

    def new_unfinished_work_seconds_metric(self, name: str, observe: Callable[[], float]) -> None:
        pass

    def new_longest_running_processor_seconds_metric(
        self, name: str, observe: Callable[[], float]
    ) -> None:
        pass

    def new_retries_metric(self, name: str) -> CounterMetric:
        return _NOOP_METRIC

    def __repr__(self) -> str:
        return "NoopMetricsProvider()"


_LABELS = ("name", "controller")
_providers: weakref.WeakKeyDictionary[Any, PrometheusMetricsProvider] = weakref.WeakKeyDictionary()
_providers_lock = threading.Lock()


class PrometheusMetricsProvider(MetricsProvider):
    """Exports workqueue metrics to a ``prometheus_client`` registry, named as controller-runtime.

    Needs the optional extra ``kubectrl[metrics]``; ``prometheus_client`` is imported only when a
    provider is made. A registry accepts each metric name once, so get the provider with
    :meth:`for_registry`, which makes one per registry and then reuses it; queues given
    ``registry=`` do that for you.

    Caveats: two live queues with the same name share their series, as in controller-runtime;
    the unfinished-work gauges then follow the queue created last.

    Example::

        from prometheus_client import CollectorRegistry
        registry = CollectorRegistry()
        queue = RateLimitingQueue(name="foos", registry=registry)
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        try:
            import prometheus_client
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise ImportError(
                "workqueue metrics for Prometheus need prometheus-client: "
                "pip install 'kubectrl[metrics]'"
            ) from exc
        self._registry = registry
        self._depth = prometheus_client.Gauge(
            "workqueue_depth", "Current depth of workqueue", _LABELS, registry=registry
        )
        self._adds = prometheus_client.Counter(
            "workqueue_adds_total",
            "Total number of adds handled by workqueue",
            _LABELS,
            registry=registry,
        )
        self._latency = prometheus_client.Histogram(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            _LABELS,
            buckets=DURATION_BUCKETS,
            registry=registry,
        )
        self._work_duration = prometheus_client.Histogram(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes.",
            _LABELS,
            buckets=DURATION_BUCKETS,
            registry=registry,
        )
        self._unfinished = prometheus_client.Gauge(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been "
            "observed by work_duration. Large values indicate stuck threads. One can deduce "
            "the number of stuck threads by observing the rate at which this increases.",
            _LABELS,
            registry=registry,
        )
        self._longest = prometheus_client.Gauge(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            _LABELS,
            registry=registry,
        )
        self._retries = prometheus_client.Counter(
            "workqueue_retries_total",
            "Total number of retries handled by workqueue",
            _LABELS,
            registry=registry,
        )

    @classmethod
    def for_registry(cls, registry: CollectorRegistry) -> PrometheusMetricsProvider:
        """The provider for ``registry``, made on first use and reused afterwards."""
        with _providers_lock:
            provider = _providers.get(registry)
            if provider is None:
                provider = cls(registry)
                _providers[registry] = provider
            return provider

    def new_depth_metric(self, name: str) -> GaugeMetric:
        gauge: GaugeMetric = self._depth.labels(name, name)
        return gauge

    def new_adds_metric(self, name: str) -> CounterMetric:
        counter: CounterMetric = self._adds.labels(name, name)
        return counter

    def new_latency_metric(self, name: str) -> HistogramMetric:
        histogram: HistogramMetric = self._latency.labels(name, name)
        return histogram

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        histogram: HistogramMetric = self._work_duration.labels(name, name)
        return histogram

    def new_unfinished_work_seconds_metric(self, name: str, observe: Callable[[], float]) -> None:
        self._unfinished.labels(name, name).set_function(observe)

    def new_longest_running_processor_seconds_metric(
        self, name: str, observe: Callable[[], float]
    ) -> None:
        self._longest.labels(name, name).set_function(observe)

    def new_retries_metric(self, name: str) -> CounterMetric:
        counter: CounterMetric = self._retries.labels(name, name)
        return counter

    def __repr__(self) -> str:
        return f"PrometheusMetricsProvider({self._registry!r})"


class QueueMetrics:
    """The bookkeeping of one named queue (client-go's ``defaultQueueMetrics``).

    Every method except the two ``observe`` functions runs under the queue's lock, which is also
    the lock the ``observe`` functions take, so the per-item timestamps need no lock of their own.
    """

    def __init__(
        self, provider: MetricsProvider, name: str, clock: Clock, lock: threading.Lock
    ) -> None:
        self._clock = clock
        self._lock = lock
        self._depth = provider.new_depth_metric(name)
        self._adds = provider.new_adds_metric(name)
        self._latency = provider.new_latency_metric(name)
        self._work_duration = provider.new_work_duration_metric(name)
        self._retries = provider.new_retries_metric(name)
        self._added_at: dict[Hashable, float] = {}
        self._started_at: dict[Hashable, float] = {}
        # The observe functions hold this object weakly: a scrape after the queue is gone reads 0
        # instead of keeping the queue's bookkeeping alive forever.
        ref = weakref.ref(self)
        provider.new_unfinished_work_seconds_metric(name, lambda: _observe(ref, unfinished=True))
        provider.new_longest_running_processor_seconds_metric(
            name, lambda: _observe(ref, unfinished=False)
        )

    def add(self, item: Hashable) -> None:
        self._adds.inc()
        self._depth.inc()
        self._added_at.setdefault(item, self._clock.now())

    def get(self, item: Hashable) -> None:
        now = self._clock.now()
        self._depth.dec()
        self._started_at[item] = now
        added_at = self._added_at.pop(item, None)
        if added_at is not None:
            self._latency.observe(now - added_at)

    def done(self, item: Hashable) -> None:
        started_at = self._started_at.pop(item, None)
        if started_at is not None:
            self._work_duration.observe(self._clock.now() - started_at)

    def retry(self) -> None:
        self._retries.inc()

    def unfinished_work_seconds(self) -> float:
        with self._lock:
            now = self._clock.now()
            return sum(now - started for started in self._started_at.values())

    def longest_running_processor_seconds(self) -> float:
        with self._lock:
            if not self._started_at:
                return 0.0
            return self._clock.now() - min(self._started_at.values())


def _observe(ref: weakref.ref[QueueMetrics], *, unfinished: bool) -> float:
    metrics = ref()
    if metrics is None:
        return 0.0
    if unfinished:
        return metrics.unfinished_work_seconds()
    return metrics.longest_running_processor_seconds()


def queue_metrics(
    name: str | None,
    clock: Clock,
    lock: threading.Lock,
    *,
    provider: MetricsProvider | None,
    registry: CollectorRegistry | None,
) -> QueueMetrics | None:
    """The bookkeeping for a new queue, or ``None`` when it reports nothing."""
    if provider is not None and registry is not None:
        raise ValueError("give a workqueue either metrics_provider or registry, not both")
    if registry is not None:
        provider = PrometheusMetricsProvider.for_registry(registry)
    if name is None or provider is None or isinstance(provider, NoopMetricsProvider):
        return None
    return QueueMetrics(provider, name, clock, lock)
