"""Per-cluster metrics of a multicluster manager (``prometheus_client`` only with a registry).

=================================================  =========  ===========================
name                                               type       labels
=================================================  =========  ===========================
``multicluster_reconcile_total``                   counter    controller, cluster, result
``multicluster_reconcile_errors_total``            counter    controller, cluster
``multicluster_reconcile_time_seconds``            histogram  controller, cluster
``multicluster_dropped_requests_total``            counter    controller, cluster
``multicluster_cluster_engaged``                   gauge      cluster
``multicluster_cluster_engage_failures_total``     counter    cluster
=================================================  =========  ===========================

``result`` is controller-runtime's: ``success``, ``error``, ``requeue``, ``requeue_after``.
``multicluster_cluster_engaged`` is 1 once the cluster's caches synced, 0 while it is engaging
(or re-engaging after a failure); the series goes away when the cluster is disengaged.
The controllers' own ``controller_runtime_*`` series are there too, summed over clusters.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["ClusterMetrics"]

_families: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()

_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


def _families_for(registry: CollectorRegistry) -> dict[str, Any]:
    with _lock:
        families = _families.get(registry)
        if families is not None:
            return families
        import prometheus_client as prom

        families = {
            "total": prom.Counter(
                "multicluster_reconcile_total",
                "Reconciles per controller and cluster, by result",
                ["controller", "cluster", "result"],
                registry=registry,
            ),
            "errors": prom.Counter(
                "multicluster_reconcile_errors_total",
                "Failed reconciles per controller and cluster",
                ["controller", "cluster"],
                registry=registry,
            ),
            "time": prom.Histogram(
                "multicluster_reconcile_time_seconds",
                "Reconcile duration per controller and cluster",
                ["controller", "cluster"],
                buckets=_BUCKETS,
                registry=registry,
            ),
            "dropped": prom.Counter(
                "multicluster_dropped_requests_total",
                "Requests of a cluster no longer engaged (or no longer owned), not reconciled",
                ["controller", "cluster"],
                registry=registry,
            ),
            "engaged": prom.Gauge(
                "multicluster_cluster_engaged",
                "1 once an engaged cluster's caches synced, 0 while it engages",
                ["cluster"],
                registry=registry,
            ),
            "engage_failures": prom.Counter(
                "multicluster_cluster_engage_failures_total",
                "Engagements whose caches did not sync (retried with backoff)",
                ["cluster"],
                registry=registry,
            ),
        }
        _families[registry] = families
        return families


class ClusterMetrics:
    """The families above on one registry; every method is a no-op without a registry."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self._f = _families_for(registry) if registry is not None else None

    def reconciled(self, controller: str, cluster: str, result: str, seconds: float) -> None:
        if self._f is None:
            return
        self._f["total"].labels(controller, cluster, result).inc()
        if result == "error":
            self._f["errors"].labels(controller, cluster).inc()
        self._f["time"].labels(controller, cluster).observe(seconds)

    def dropped(self, controller: str, cluster: str) -> None:
        if self._f is not None:
            self._f["dropped"].labels(controller, cluster).inc()

    def engaged(self, cluster: str, ready: bool) -> None:
        if self._f is not None:
            self._f["engaged"].labels(cluster).set(1 if ready else 0)

    def engage_failed(self, cluster: str) -> None:
        if self._f is not None:
            self._f["engage_failures"].labels(cluster).inc()

    def disengaged(self, cluster: str) -> None:
        if self._f is None:
            return
        with contextlib.suppress(KeyError):  # never engaged long enough to have a series
            self._f["engaged"].remove(cluster)
