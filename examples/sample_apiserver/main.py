"""Command line of the wardle API server (``k8s.io/sample-apiserver``'s ``main.go``).

In a cluster (see ``artifacts/``)::

    python examples/sample_apiserver --cert-dir /certs --db /data/wardle.db

It serves HTTPS on ``--bind-address:--secure-port`` with ``tls.crt`` and ``tls.key`` of
``--cert-dir``, keeps Flunders and Fischers in the SQLite file ``--db`` (in memory without it),
and lets kube-apiserver authenticate and authorize every request (its service account needs the
RBAC of ``artifacts/rbac.yaml``). ``--kubeconfig`` reaches a cluster from outside.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path

from wardle import wardle_server

from kubectrl.apiserver import DelegatingAuth, MemoryStorage, SQLiteStorage, Storage
from kubectrl.client import load_config


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="wardle-apiserver",
        description="The wardle.example.com extension API server, written with kubectrl.",
    )
    parser.add_argument("--kubeconfig", help="kubeconfig path (default: $KUBECONFIG, in-cluster)")
    parser.add_argument(
        "--bind-address",
        default="0.0.0.0",  # noqa: S104 - in a Pod, the Service reaches any address
        help="address to serve on (default %(default)s)",
    )
    parser.add_argument("--secure-port", type=int, default=8443, help="default %(default)s")
    parser.add_argument(
        "--cert-dir", required=True, help="directory of the serving tls.crt and tls.key"
    )
    parser.add_argument("--db", default="", help="SQLite file (default: in memory)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log each refused request")
    return parser.parse_args(argv)


async def serve(args: argparse.Namespace) -> None:
    """Serve until SIGTERM or SIGINT."""
    storage: Storage = SQLiteStorage(args.db) if args.db else MemoryStorage()
    server = wardle_server(auth=DelegatingAuth(load_config(args.kubeconfig)), storage=storage)
    cert_dir = Path(args.cert_dir)
    await server.start(
        host=args.bind_address,
        port=args.secure_port,
        cert_file=str(cert_dir / "tls.crt"),
        key_file=str(cert_dir / "tls.key"),
    )
    print(f"serving on {args.bind_address}:{server.port}", flush=True)  # noqa: T201
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop()
    if isinstance(storage, SQLiteStorage):
        storage.close()


def main(argv: list[str] | None = None) -> int:
    """Run the server; the exit code."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO)
    for noisy in ("httpx", "httpcore", "asyncio"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    asyncio.run(serve(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
