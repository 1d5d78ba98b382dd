"""The REST client's request metrics, as client-go reports them (``tools/metrics``) and
controller-runtime exports them (``pkg/metrics/client_go_adapter.go``).

=============================================  =========  ====================
name                                           type       labels
=============================================  =========  ====================
``rest_client_requests_total``                 counter    code, method, host
``rest_client_request_duration_seconds``       histogram  verb, host
=============================================  =========  ====================

``code`` is the HTTP status (``"200"``), or ``"<error>"`` when no answer came (client-go's
label); ``method`` and ``verb`` the HTTP method (``GET``); ``host`` the server's ``host:port``.
One count per exchange with the server (each retry, each watch opened); one duration per
request, from before its first try (the client-side rate limiter's wait included) to its
answer, as client-go's ``Request.request`` measures it.

Every client of the process reports to every :class:`RestClientMetrics` alive (client-go's
metrics are process-wide too): a ``Manager`` makes one on its registry. ``prometheus_client``
is imported only when one is made. The pipeline (``_pipeline``) keeps the observers and calls
them, so that a request enters no module of its own for its metrics.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

from kubectrl.client._pipeline import add_request_observer, remove_request_observer

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["REQUEST_DURATION_BUCKETS", "RestClientMetrics"]

#: controller-runtime's buckets for ``rest_client_request_duration_seconds``.
REQUEST_DURATION_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)

_families: weakref.WeakKeyDictionary[Any, tuple[Any, Any]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def _families_for(registry: CollectorRegistry) -> tuple[Any, Any]:
    with _lock:
        families = _families.get(registry)
        if families is None:
            try:
                import prometheus_client as prom
            except ImportError as exc:  # pragma: no cover - depends on the installation
                raise ImportError(
                    "REST client metrics need prometheus-client: pip install 'kubectrl[metrics]'"
                ) from exc
            families = (
                prom.Counter(
                    "rest_client_requests_total",
                    "Number of HTTP requests, partitioned by status code, method, and host.",
                    ["code", "method", "host"],
                    registry=registry,
                ),
                prom.Histogram(
                    "rest_client_request_duration_seconds",
                    "Request latency in seconds. Broken down by verb and host.",
                    ["verb", "host"],
                    buckets=REQUEST_DURATION_BUCKETS,
                    registry=registry,
                ),
            )
            _families[registry] = families
        return families


class RestClientMetrics:
    """Reports every request of every client in the process on ``registry`` while this object
    is referenced (and until :meth:`close`).

    Example::

        metrics = RestClientMetrics(registry)    # rest_client_requests_total, ... from now on
        ...
        metrics.close()
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        self._requests, self._duration = _families_for(registry)
        add_request_observer(self)

    def result(self, code: str, method: str, host: str) -> None:
        """Count one exchange."""
        self._requests.labels(code, method, host).inc()

    def latency(self, verb: str, host: str, seconds: float) -> None:
        """Observe one request's duration."""
        self._duration.labels(verb, host).observe(seconds)

    def close(self) -> None:
        """Stop reporting (the series already reported stay on the registry)."""
        remove_request_observer(self)
