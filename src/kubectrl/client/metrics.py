"""The REST client's request metrics with client-go's names (``tools/metrics``), for Prometheus:
``rest_client_requests_total{code, method, host}`` and
``rest_client_request_duration_seconds{verb, host}``.

A ``Manager`` reports them on its registry (served on ``/metrics``); outside a manager, make a
:class:`RestClientMetrics` on a registry of your own. Every client of the process reports to
every one alive, as client-go's metrics are process-wide.

Example::

    from prometheus_client import CollectorRegistry
    from kubectrl.client.metrics import RestClientMetrics

    registry = CollectorRegistry()
    metrics = RestClientMetrics(registry)
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl.client._request_metrics import REQUEST_DURATION_BUCKETS, RestClientMetrics

__all__ = ["REQUEST_DURATION_BUCKETS", "RestClientMetrics"]

_publish(__name__, globals(), __all__, private_of="kubectrl.client")
