"""Controller metrics with controller-runtime's names (``pkg/internal/controller/metrics``).

=====================================================  =========  ===========================
name                                                   type       labels
=====================================================  =========  ===========================
``controller_runtime_reconcile_total``                 counter    controller, result
``controller_runtime_reconcile_errors_total``          counter    controller
``controller_runtime_terminal_reconcile_errors_total`` counter    controller
``controller_runtime_reconcile_panics_total``          counter    controller
``controller_runtime_reconcile_timeouts_total``        counter    controller
``controller_runtime_reconcile_time_seconds``          histogram  controller
``controller_runtime_max_concurrent_reconciles``       gauge      controller
``controller_runtime_active_workers``                  gauge      controller
``controller_runtime_reconcile_stale_cache_total``     counter    controller, result
=====================================================  =========  ===========================

``result`` is one of ``success``, ``error``, ``requeue``, ``requeue_after``.
``controller_runtime_reconcile_stale_cache_total`` is kubectrl's own (controller-runtime has no
read-your-writes yet): how often a reconcile found the cache behind the key's own earlier writes
(``ControllerOptions.read_your_writes``), by outcome: ``waited`` (it caught up within
``read_your_writes_timeout`` and the reconcile ran), ``requeued`` (it did not; the key was
requeued with backoff), ``gave_up`` (still unseen after a long while; the reconcile ran).

Python has no panics distinct from errors: every exception a reconciler raises is an error, so
``..._panics_total`` stays 0; it is exported so dashboards built for Go controllers work.
``..._timeouts_total`` counts the reconciles the controller cut off at its
``reconcile_timeout`` (controller-runtime's ``ReconciliationTimeout``), not other errors.

``prometheus_client`` is imported only when a registry is given (extra ``kubectrl[metrics]``);
without one every call is a no-op.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = [
    "RECONCILE_RESULTS",
    "RECONCILE_TIME_BUCKETS",
    "STALE_CACHE_RESULTS",
    "ControllerMetrics",
]

RECONCILE_RESULTS = ("success", "error", "requeue", "requeue_after")
STALE_CACHE_RESULTS = ("waited", "requeued", "gave_up")

# controller-runtime's buckets for controller_runtime_reconcile_time_seconds.
RECONCILE_TIME_BUCKETS: tuple[float, ...] = (
    *(0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7),
    *(0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10),
    *(15, 20, 25, 30, 40, 50, 60),
)

_families: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def _families_for(registry: CollectorRegistry) -> dict[str, Any]:
    with _lock:
        families = _families.get(registry)
        if families is not None:
            return families
        try:
            import prometheus_client as prom
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise ImportError(
                "controller metrics need prometheus-client: pip install 'kubectrl[metrics]'"
            ) from exc
        families = {
            "total": prom.Counter(
                "controller_runtime_reconcile_total",
                "Total number of reconciliations per controller",
                ["controller", "result"],
                registry=registry,
            ),
            "errors": prom.Counter(
                "controller_runtime_reconcile_errors_total",
                "Total number of reconciliation errors per controller",
                ["controller"],
                registry=registry,
            ),
            "terminal": prom.Counter(
                "controller_runtime_terminal_reconcile_errors_total",
                "Total number of terminal reconciliation errors per controller",
                ["controller"],
                registry=registry,
            ),
            "panics": prom.Counter(
                "controller_runtime_reconcile_panics_total",
                "Total number of reconciliation panics per controller",
                ["controller"],
                registry=registry,
            ),
            "timeouts": prom.Counter(
                "controller_runtime_reconcile_timeouts_total",
                "Total number of reconciliation timeouts per controller",
                ["controller"],
                registry=registry,
            ),
            "time": prom.Histogram(
                "controller_runtime_reconcile_time_seconds",
                "Length of time per reconciliation per controller",
                ["controller"],
                buckets=RECONCILE_TIME_BUCKETS,
                registry=registry,
            ),
            "max_concurrent": prom.Gauge(
                "controller_runtime_max_concurrent_reconciles",
                "Maximum number of concurrent reconciles per controller",
                ["controller"],
                registry=registry,
            ),
            "stale_cache": prom.Counter(
                "controller_runtime_reconcile_stale_cache_total",
                "Total number of reconciles that found the cache behind the key's own earlier "
                "writes, per controller and outcome (waited, requeued, gave_up)",
                ["controller", "result"],
                registry=registry,
            ),
            "active": prom.Gauge(
                "controller_runtime_active_workers",
                "Number of currently used workers per controller",
                ["controller"],
                registry=registry,
            ),
        }
        _families[registry] = families
        return families


class ControllerMetrics:
    """The series of one controller; no-ops when ``registry`` is ``None``.

    Example::

        metrics = ControllerMetrics(registry, "foo")
        metrics.reconciled("success", seconds=0.02)
    """

    def __init__(self, registry: CollectorRegistry | None, controller: str) -> None:
        self._families = None if registry is None else _families_for(registry)
        self._controller = controller
        if self._families is not None:
            # Initialise every series at 0, as controller-runtime does, so rates start at once.
            for result in RECONCILE_RESULTS:
                self._families["total"].labels(controller, result)
            for result in STALE_CACHE_RESULTS:
                self._families["stale_cache"].labels(controller, result)
            for name in ("errors", "terminal", "panics", "timeouts", "active", "max_concurrent"):
                self._families[name].labels(controller)

    def set_max_concurrent(self, workers: int) -> None:
        """Report ``max_concurrent_reconciles``."""
        if self._families is not None:
            self._families["max_concurrent"].labels(self._controller).set(workers)

    def worker_active(self, delta: int) -> None:
        """Add ``delta`` (+1 / -1) to the active workers gauge."""
        if self._families is not None:
            self._families["active"].labels(self._controller).inc(delta)

    def stale_cache(self, result: str) -> None:
        """Count one reconcile that found the cache behind the key's writes (``result``: one
        of :data:`STALE_CACHE_RESULTS`)."""
        if self._families is not None:
            self._families["stale_cache"].labels(self._controller, result).inc()

    def reconciled(self, result: str, *, seconds: float, terminal: bool = False) -> None:
        """Count one reconcile with ``result`` and its duration."""
        if self._families is None:
            return
        self._families["total"].labels(self._controller, result).inc()
        self._families["time"].labels(self._controller).observe(seconds)
        if result == "error":
            self._families["errors"].labels(self._controller).inc()
        if terminal:
            self._families["terminal"].labels(self._controller).inc()

    def reconcile_timed_out(self) -> None:
        """Count one reconcile cut off at the controller's ``reconcile_timeout``."""
        if self._families is not None:
            self._families["timeouts"].labels(self._controller).inc()
