"""The manager's event recorder writes through a client of its own.

controller-runtime's recorder provider builds its own clientset from the manager's config
(kubernetes-sigs/controller-runtime, pkg/internal/recorder/recorder.go: ``NewProvider`` calls
``corev1client.NewForConfigAndClient``), and client-go gives every client built from a config its
own token bucket: a burst of events cannot spend the QPS the reconcilers' client has left.
"""

from __future__ import annotations

from kubectrl.client import ClientConfig, RateLimit
from kubectrl.runtime import Manager, ManagerOptions

CONFIG = ClientConfig(server="https://127.0.0.1:9", rate_limit=RateLimit(qps=5, burst=10))


async def test_the_recorder_has_its_own_client_and_rate_limiter() -> None:
    manager = Manager(
        CONFIG, options=ManagerOptions(metrics_bind_address="0", health_probe_bind_address="0")
    )
    manager.event_recorder("one")
    manager.event_recorder("two")  # every recorder shares the broadcaster and its client
    sink = manager._broadcasters["events.k8s.io/v1"]._sink
    events_client = sink._client
    assert events_client is not manager._api
    assert events_client.config == manager._api.config
    assert events_client._limiter is not None
    assert events_client._limiter is not manager._api._limiter
    # Spending the events client's whole burst leaves the reconcilers' bucket untouched.
    for _ in range(10):
        assert events_client._limiter.try_acquire()
    assert not events_client._limiter.try_acquire()
    assert manager._api._limiter is not None
    assert manager._api._limiter.try_acquire()
    await manager._api.aclose()
    await events_client.aclose()
