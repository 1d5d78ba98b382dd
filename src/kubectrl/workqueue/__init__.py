"""Work queues for controllers, with client-go's semantics.

A controller turns "this object may have changed" into a key (``"namespace/name"``) and adds it to
a queue; workers take keys from the queue and reconcile them. The queue is where correctness
comes from:

- **Deduplication**: a key queued twice is processed once.
- **One worker per key**: a key is never handed to two workers at once; a key added while being
  processed runs exactly once more afterwards, so the latest state is always seen.
- **Backoff**: failed keys come back after a per-key exponential delay, and a global token bucket
  keeps a storm of failures from hammering the API server.

The layers are client-go's: :class:`Queue` (add, get, done, shutdown), :class:`DelayingQueue`
(``add_after``) and :class:`RateLimitingQueue` (``add_rate_limited``, ``forget``,
``num_requeues``), with the :class:`RateLimiter` implementations and
:func:`default_controller_rate_limiter`. Queues work from asyncio tasks (``await get()``) and from
threads (``get_blocking()``) at the same time. Named queues report controller-runtime's
``workqueue_*`` metrics through a :class:`MetricsProvider`, to Prometheus when given a registry.

See ``docs/workqueue.md`` for a guided tour.
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl.workqueue._delaying import DelayingQueue
from kubectrl.workqueue._metrics import (
    CounterMetric,
    GaugeMetric,
    HistogramMetric,
    MetricsProvider,
    NoopMetricsProvider,
    PrometheusMetricsProvider,
)
from kubectrl.workqueue._priority import DEFAULT_PRIORITY, LOW_PRIORITY, PriorityQueue
from kubectrl.workqueue._queue import Queue, QueueShutDown, QueueStatistics
from kubectrl.workqueue._rate_limiters import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
)
from kubectrl.workqueue._rate_limiting import RateLimitingQueue

__all__ = [
    "DEFAULT_PRIORITY",
    "LOW_PRIORITY",
    "BucketRateLimiter",
    "CounterMetric",
    "DelayingQueue",
    "GaugeMetric",
    "HistogramMetric",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "MetricsProvider",
    "NoopMetricsProvider",
    "PriorityQueue",
    "PrometheusMetricsProvider",
    "Queue",
    "QueueShutDown",
    "QueueStatistics",
    "RateLimiter",
    "RateLimitingQueue",
    "WithMaxWaitRateLimiter",
    "default_controller_rate_limiter",
]

# Exported objects report their public module path (reprs, docs, pickling), as httpx does.
for _name in __all__:
    if not isinstance(globals()[_name], int):  # the priorities are plain ints
        globals()[_name].__module__ = __name__
del _name

_publish(__name__, globals(), __all__)
