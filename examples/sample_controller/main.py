"""Command line and wiring of the Foo controller (``main.go`` of kubernetes/sample-controller).

Run it against any cluster that has the Foo CRD::

    python examples/sample_controller --kubeconfig ~/.kube/config

or against a local control plane that it starts, with the CRD installed::

    python examples/sample_controller --local

``--enable-webhooks`` also serves the Foo webhooks (``webhooks.py``: defaulting, validation and
v1alpha1 <-> v1beta1 conversion) over HTTPS on ``--webhook-port`` with the ``tls.crt`` and
``tls.key`` of ``--webhook-cert-dir``; with ``--local`` they get a local CA, and the API server
is configured to call them.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from api import CRD_NAME, CRD_PATH, Foo
from controller import CONTROLLER_AGENT_NAME, FooReconciler
from kubernetes.client.models import V1Deployment

from kubectrl.client import load_config, load_kubeconfig
from kubectrl.errors import ConfigError
from kubectrl.runtime import Builder, Manager, ManagerOptions
from kubectrl.runtime.predicate import resource_version_changed
from kubectrl.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
)

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

#: The original resyncs its informers every 30 s.
RESYNC_PERIOD = 30.0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="sample-controller",
        description="The Foo controller of kubernetes/sample-controller, written with kubectrl.",
    )
    parser.add_argument("--kubeconfig", help="kubeconfig path (default: $KUBECONFIG, in-cluster)")
    parser.add_argument("--context", help="kubeconfig context (default: current-context)")
    parser.add_argument("--namespace", default=None, help="watch one namespace (default: all)")
    parser.add_argument("--workers", type=int, default=2, help="concurrent reconciles (default 2)")
    parser.add_argument("--leader-elect", action="store_true", help="use a Lease for leadership")
    parser.add_argument(
        "--read-your-writes",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="before a Foo's next sync, wait for the cache to see this controller's own writes "
        "(default: on)",
    )
    parser.add_argument(
        "--leader-election-namespace",
        default="",
        help="namespace of the Lease (default: the pod's namespace)",
    )
    parser.add_argument(
        "--metrics-bind-address",
        default=ManagerOptions.metrics_bind_address,
        help="Prometheus /metrics address (default %(default)s, the library's: loopback only; "
        '"0": off; to serve the network, add --metrics-secure)',
    )
    parser.add_argument(
        "--metrics-secure",
        action="store_true",
        help="serve /metrics over TLS, only to callers the cluster authenticates and authorizes "
        "(TokenReview + SubjectAccessReview)",
    )
    parser.add_argument(
        "--metrics-cert-dir",
        default="",
        help="with --metrics-secure: directory of tls.crt and tls.key (default: self-signed)",
    )
    parser.add_argument(
        "--health-probe-bind-address", default="0", help='/healthz and /readyz address ("0": off)'
    )
    parser.add_argument(
        "--enable-webhooks",
        action="store_true",
        help="serve the Foo defaulting, validating and conversion webhooks (HTTPS)",
    )
    parser.add_argument(
        "--webhook-port",
        type=int,
        default=9443,
        help="port of the webhook server (default %(default)s, controller-runtime's; 0: a free "
        "port)",
    )
    parser.add_argument(
        "--webhook-cert-dir",
        default="",
        help="directory of the webhook server's tls.crt and tls.key, reloaded when they change "
        "(default: <tmp>/k8s-webhook-server/serving-certs)",
    )
    parser.add_argument(
        "--local",
        action="store_true",
        help="start a local control plane, install the Foo CRD (and the webhooks) and run "
        "against it",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    if args.local and (args.kubeconfig or args.context):
        parser.error("--local runs against its own control plane; drop --kubeconfig/--context")
    if not 0 <= args.webhook_port < 65536:
        parser.error("--webhook-port must be a port number (0: a free one)")
    return args


def rate_limiter() -> MaxOfRateLimiter[object]:
    """The original's queue limiter: max of per-key 5 ms..1000 s and a 50 QPS / 300 bucket."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(base_delay=0.005, max_delay=1000.0),
        BucketRateLimiter(qps=50, burst=300),
    )


def build_manager(args: argparse.Namespace, kubeconfig: str | None = None) -> Manager:
    """The manager with the Foo controller registered (not started)."""
    path = kubeconfig or args.kubeconfig
    config = load_kubeconfig(path, context=args.context) if path else load_config()
    webhook_server = None
    if args.enable_webhooks:
        from kubectrl.webhook import WebhookServerOptions

        webhook_server = WebhookServerOptions(
            host="127.0.0.1" if args.local else "",  # "": all interfaces, in a pod
            port=args.webhook_port,
            cert_dir=args.webhook_cert_dir,
        )
    options = ManagerOptions(
        metrics_bind_address=args.metrics_bind_address,
        metrics_secure=args.metrics_secure,
        metrics_cert_dir=args.metrics_cert_dir,
        health_probe_bind_address=args.health_probe_bind_address,
        leader_election=args.leader_elect,
        leader_election_id="sample-controller.samplecontroller.k8s.io",
        leader_election_namespace=args.leader_election_namespace,
        leader_election_release_on_cancel=True,
        cache_namespace=args.namespace,
        sync_period=RESYNC_PERIOD,
        webhook_server=webhook_server,
    )
    manager = Manager(config, options=options)
    # core v1 Events, as the Go original's record.EventRecorder writes them.
    recorder = manager.event_recorder(CONTROLLER_AGENT_NAME, api="v1")
    (
        Builder(manager)
        .for_(Foo)
        # Deployment events enqueue the Foo that controls them. Resyncs re-deliver unchanged
        # objects; like the original, skip updates whose resourceVersion did not change.
        .owns(V1Deployment, predicates=[resource_version_changed])
        .named("foo")
        .with_options(
            max_concurrent_reconciles=args.workers,
            rate_limiter=rate_limiter(),
            read_your_writes=args.read_your_writes,
        )
        .complete(FooReconciler(manager.client, recorder))
    )
    if args.enable_webhooks:
        import webhooks

        webhooks.register(manager)
    return manager


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # httpx logs every request at INFO; that is debugging detail here.
    logging.getLogger("httpx").setLevel(logging.DEBUG if args.verbose else logging.WARNING)
    try:
        if args.local:
            return run_local(args)
        build_manager(args).run()
    except ConfigError as err:
        print(f"sample-controller: {err}", file=sys.stderr)  # noqa: T201
        return 2
    return 0


def run_local(args: argparse.Namespace) -> int:
    from kubectrl.envtest import ControlPlane, WebhookInstallOptions

    log = logging.getLogger("sample_controller")
    with ControlPlane() as control_plane:
        control_plane.install_crds([CRD_PATH])
        log.info("local control plane ready; export KUBECONFIG=%s", control_plane.kubeconfig.path)
        install = None
        if args.enable_webhooks:
            # A local CA and serving certificate; the server listens on 127.0.0.1.
            install = WebhookInstallOptions(
                conversion_crds=[CRD_NAME],
                local_serving_port=args.webhook_port,
                local_serving_cert_dir=args.webhook_cert_dir,
            ).prepare()
            args.webhook_port = install.local_serving_port
            args.webhook_cert_dir = install.local_serving_cert_dir
        manager = build_manager(args, kubeconfig=str(control_plane.kubeconfig.path))
        if install is not None:
            install_local_webhooks(install, control_plane, manager, log)
        try:
            manager.run()
        finally:
            if install is not None:
                install.cleanup()
    return 0


def install_local_webhooks(
    install: Any, control_plane: Any, manager: Manager, log: logging.Logger
) -> None:
    """Point the local API server at the webhook server, once the manager serves it.

    ``manager.run()`` blocks this thread, so a daemon thread installs the configurations and
    waits until the API server reaches the server (``WebhookInstallOptions.install``).
    """
    import threading

    import webhooks

    install.configurations = webhooks.configurations(manager)

    def run() -> None:
        try:
            install.install(control_plane)
        except Exception as err:  # reported; the controller keeps running
            log.error("installing the webhooks on the local control plane failed: %s", err)
        else:
            log.info("webhooks installed: the API server calls %s", install.url("/..."))

    threading.Thread(target=run, name="install-webhooks", daemon=True).start()
