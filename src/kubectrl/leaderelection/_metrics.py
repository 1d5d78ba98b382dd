"""``leader_election_master_status{name}``: 1 while this process leads, else 0.

The name and help text are client-go's (``tools/leaderelection/metrics.go``) as controller-runtime
registers them, so existing dashboards work. ``prometheus_client`` is imported only when a
registry is given (extra ``kubectrl[metrics]``).
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["LeaderStatusMetric"]

_gauges: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def _gauge_for(registry: CollectorRegistry) -> Any:
    with _lock:
        gauge = _gauges.get(registry)
        if gauge is None:
            try:
                import prometheus_client
            except ImportError as exc:  # pragma: no cover - depends on the installation
                raise ImportError(
                    "leader election metrics need prometheus-client: "
                    "pip install 'kubectrl[metrics]'"
                ) from exc
            gauge = prometheus_client.Gauge(
                "leader_election_master_status",
                "Gauge of if the reporting system is master of the relevant lease, 0 indicates "
                "backup, 1 indicates master. 'name' is the string used to identify the lease. "
                "Please make sure to group by name.",
                ["name"],
                registry=registry,
            )
            _gauges[registry] = gauge
        return gauge


class LeaderStatusMetric:
    """Sets ``leader_election_master_status{name}``; does nothing without a registry.

    Example::

        metric = LeaderStatusMetric(registry, "my-controller")
        metric.set(True)
    """

    def __init__(self, registry: CollectorRegistry | None, name: str) -> None:
        self._child = None if registry is None else _gauge_for(registry).labels(name)
        if self._child is not None:
            self._child.set(0)

    def set(self, leading: bool) -> None:
        """Report whether this process leads."""
        if self._child is not None:
            self._child.set(1 if leading else 0)
