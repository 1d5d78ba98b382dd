"""Print one line per Service added, updated or deleted, using a kubectrl informer.

Usage::

    python examples/service_watcher/service_watcher.py [--kubeconfig PATH] [--context NAME]
                                                       [--namespace NS]

Output (one line per change, flushed at once)::

    # synced 1 services in all namespaces
    ADDED default/kubernetes type=ClusterIP ports=443/TCP
    UPDATED shop/web changed: metadata.labels.tier, spec.ports
    DELETED shop/web

Lines starting with ``#`` are status, not events. Runs against any cluster the kubeconfig points
at (default: ``$KUBECONFIG`` or ``~/.kube/config``, or the in-cluster service account), including
the local control plane (``python -m kubectrl.envtest``). Stop with Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from kubectrl.cache import DeletedFinalStateUnknown, Informer, ListWatch, strip_managed_fields
from kubectrl.client import AsyncClient, load_config

# Fields that change on every write and say nothing about what the user changed.
IGNORED = {
    "metadata.resourceVersion",
    "metadata.managedFields",
    "metadata.generation",
}


def changed_paths(old: Any, new: Any, prefix: str = "") -> Iterator[str]:
    """Dotted paths whose values differ between ``old`` and ``new`` (dicts recursed into)."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(old) | set(new)):
            path = f"{prefix}.{key}" if prefix else str(key)
            if path in IGNORED:
                continue
            yield from changed_paths(old.get(key), new.get(key), path)
    elif old != new:
        yield prefix


def describe(svc: Mapping[str, Any]) -> str:
    spec = svc.get("spec") or {}
    ports = ",".join(f"{p.get('port')}/{p.get('protocol', 'TCP')}" for p in spec.get("ports") or ())
    return f"type={spec.get('type', 'ClusterIP')} ports={ports or '-'}"


def key(svc: Mapping[str, Any]) -> str:
    meta = svc.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


class Printer:
    """The informer handler: formats each change as one line."""

    def on_add(self, obj: dict[str, Any], is_in_initial_list: bool) -> None:
        emit(f"ADDED {key(obj)} {describe(obj)}")

    def on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        paths = list(changed_paths(old, new))
        if paths:  # a resync or a status-less touch changes nothing worth a line
            emit(f"UPDATED {key(new)} changed: {', '.join(paths)}")

    def on_delete(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            emit(f"DELETED {key(obj.obj)} (missed while disconnected)")
        else:
            emit(f"DELETED {key(obj)}")


def emit(line: str) -> None:
    print(line, flush=True)  # noqa: T201 - printing is the point of this example


async def watch_services(
    kubeconfig: str | None, context: str | None, namespace: str | None
) -> None:
    config = load_config(kubeconfig, context=context)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    async with AsyncClient(config) as client:
        informer = Informer(
            ListWatch(client, ("v1", "Service"), namespace=namespace),
            transform=strip_managed_fields,
        )
        informer.add_handler(Printer())
        async with informer:
            await informer.wait_for_cache_sync(timeout=60)
            where = f"namespace {namespace}" if namespace else "all namespaces"
            emit(f"# synced {len(informer.indexer)} services in {where}")
            await stop.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubeconfig", help="kubeconfig path (default: $KUBECONFIG, ~/.kube)")
    parser.add_argument("--context", help="kubeconfig context (default: the current one)")
    parser.add_argument("--namespace", "-n", help="watch one namespace (default: all)")
    args = parser.parse_args(argv)
    try:
        asyncio.run(watch_services(args.kubeconfig, args.context, args.namespace))
    except KeyboardInterrupt:
        pass
    except Exception as err:  # a clear one-line reason, not a traceback, for CLI users
        print(f"service_watcher: {err}", file=sys.stderr)  # noqa: T201
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
