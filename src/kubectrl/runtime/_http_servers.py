"""The Manager's HTTP servers: metrics and health probes (its ``HTTP_SERVERS`` group).

controller-runtime's ``metricsserver.Server`` and the manager's health probe server: the
manager adds both to the ``HTTP_SERVERS`` runnable group (see ``_runnables``), which starts
first, so the kubelet's probes answer while the caches sync, and stops last. The server itself
(routes, checks, TLS, the TokenReview / SubjectAccessReview filter) is
:class:`~kubectrl.runtime._server.HTTPServer`.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from kubectrl.client import AsyncClient, ClientConfig
from kubectrl.runtime._manager_options import DEFAULT_METRICS_BIND_ADDRESS, ManagerOptions
from kubectrl.runtime._server import (
    HTTPServer,
    KubernetesAuthFilter,
    metrics_tls_context,
    parse_bind_address,
    ping,
)

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["ServerRunnable", "new_metrics_server", "new_probe_server"]

log = logging.getLogger("kubectrl.runtime.manager")


def new_metrics_server(
    options: ManagerOptions,
    config: ClientConfig,
    api: AsyncClient,
    registry: CollectorRegistry | None,
) -> HTTPServer:
    """The ``/metrics`` server ``options`` ask for (disabled: an ``HTTPServer("0")``).

    ``metrics_bind_address`` ``None`` is ``127.0.0.1:8080``, or off when ``config`` brings its
    own transport (an API server in the process); ``metrics_secure`` serves TLS to callers the
    cluster authenticates and authorizes; a plain non-loopback address is logged as a warning.
    """
    bind = options.metrics_bind_address
    if bind is None:
        # In-process API server (a test's FakeAPI): no fixed port unless one is asked for.
        if config.transport is not None:
            log.info(
                "metrics not served: the client config has its own transport (an in-process "
                "API server); set ManagerOptions(metrics_bind_address=...) to serve them",
                extra={"default_bind_address": DEFAULT_METRICS_BIND_ADDRESS},
            )
            bind = "0"
        else:
            bind = DEFAULT_METRICS_BIND_ADDRESS
    address = parse_bind_address(bind)
    if address is None:
        return HTTPServer("0")
    if options.metrics_secure:
        return HTTPServer(
            bind,
            registry=registry,
            serve_probes=False,
            tls=metrics_tls_context(options.metrics_cert_dir or None),
            request_filter=KubernetesAuthFilter(api),
        )
    if not _is_loopback(address[0]):
        log.warning(
            "metrics served on %s over plain HTTP without authentication: anyone who can "
            "reach it can read them; bind 127.0.0.1 or set metrics_secure=True",
            bind,
            extra={"address": bind},
        )
    return HTTPServer(bind, registry=registry, serve_probes=False)


def new_probe_server(
    options: ManagerOptions,
    informers_synced: Callable[[], None],
    elector_running: Callable[[], None],
) -> HTTPServer:
    """The ``/healthz`` and ``/readyz`` server (off unless ``health_probe_bind_address``).

    ``/healthz`` has ``ping``; ``/readyz`` has ``informers`` and, with leader election,
    ``leader-election`` (each check raises while not ready).
    """
    server = HTTPServer(options.health_probe_bind_address)
    server.add_healthz_check("ping", ping)
    server.add_readyz_check("informers", informers_synced)
    if options.leader_election:
        server.add_readyz_check("leader-election", elector_running)
    return server


class ServerRunnable:
    """An :class:`HTTPServer` as a member of the ``HTTP_SERVERS`` group."""

    need_leader_election = False

    def __init__(self, name: str, server: HTTPServer) -> None:
        self.name = name
        self.server = server

    async def start(self) -> None:
        await self.server.start()
        if self.server.enabled:
            log.info("Starting %s", self.name, extra={"port": self.server.port})

    async def stop(self, timeout: float | None = 30.0) -> None:
        await self.server.stop()


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # "" (every interface) or a name: not known to be loopback
