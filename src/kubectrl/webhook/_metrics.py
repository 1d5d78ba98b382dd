"""Webhook metrics with controller-runtime's names (``pkg/webhook/internal/metrics``).

==================================================  =========  ==============
name                                                type       labels
==================================================  =========  ==============
``controller_runtime_webhook_requests_total``       counter    webhook, code
``controller_runtime_webhook_latency_seconds``      histogram  webhook, code
``controller_runtime_webhook_requests_in_flight``   gauge      webhook
==================================================  =========  ==============

``webhook`` is the path, ``code`` the HTTP status. ``prometheus_client`` is imported only when a
registry is given; without one every call is a no-op.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["WebhookMetrics"]

_families: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def _families_for(registry: CollectorRegistry) -> dict[str, Any]:
    with _lock:
        families = _families.get(registry)
        if families is None:
            import prometheus_client as prom

            families = {
                "total": prom.Counter(
                    "controller_runtime_webhook_requests_total",
                    "Total number of admission requests by HTTP status code.",
                    ["webhook", "code"],
                    registry=registry,
                ),
                "latency": prom.Histogram(
                    "controller_runtime_webhook_latency_seconds",
                    "Histogram of the latency of processing admission requests",
                    ["webhook", "code"],
                    registry=registry,
                ),
                "in_flight": prom.Gauge(
                    "controller_runtime_webhook_requests_in_flight",
                    "Current number of admission requests being served.",
                    ["webhook"],
                    registry=registry,
                ),
            }
            _families[registry] = families
        return families


class WebhookMetrics:
    """Records webhook requests in ``registry`` (nothing when it is ``None``)."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self._families = _families_for(registry) if registry is not None else None

    def started(self, path: str) -> None:
        """A request to ``path`` is being served."""
        if self._families is not None:
            self._families["in_flight"].labels(path).inc()

    def finished(self, path: str, code: int, seconds: float) -> None:
        """The request to ``path`` was answered with HTTP ``code`` after ``seconds``."""
        if self._families is not None:
            self._families["in_flight"].labels(path).dec()
            self._families["total"].labels(path, str(code)).inc()
            self._families["latency"].labels(path, str(code)).observe(seconds)
