"""The wardle example server (``examples/sample_apiserver``) as the benchmark runs it.

``python benchmarks/apiserver/wardle_server.py KUBECONFIG``: the example's ``wardle_server``
with :class:`~kubectrl.apiserver.DelegatingAuth` to the cluster of ``KUBECONFIG`` and objects in
memory, serving HTTPS on a free loopback port with a self-signed certificate (as
``k8s.io/sample-apiserver`` does without ``--tls-cert-file``). It prints ``port <n>`` once it
serves, and stops on SIGTERM. ``python benchmarks/apiserver/wardle_server.py KUBECONFIG OUT``
runs it under :mod:`cProfile` and writes the statistics to ``OUT`` when it stops.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "sample_apiserver"))

from wardle import wardle_server

from kubectrl.apiserver import DelegatingAuth, MemoryStorage
from kubectrl.client import load_config


async def serve(kubeconfig: str) -> None:
    """Serve until SIGTERM."""
    server = wardle_server(auth=DelegatingAuth(load_config(kubeconfig)), storage=MemoryStorage())
    await server.start(host="127.0.0.1", port=0)
    print(f"port {server.port}", flush=True)  # noqa: T201
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await server.stop()


if __name__ == "__main__":
    if len(sys.argv) > 2:
        import cProfile

        profiler = cProfile.Profile()
        profiler.runcall(asyncio.run, serve(sys.argv[1]))
        profiler.dump_stats(sys.argv[2])
    else:
        asyncio.run(serve(sys.argv[1]))
