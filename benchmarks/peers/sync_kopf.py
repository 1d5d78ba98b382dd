"""kopf: an operator with one ``@kopf.on.event`` handler on ConfigMaps of one namespace.

Synced when the handler has seen every listed object once (kopf has no cache of its own to ask).
Only the ``synced`` phase. The kubeconfig comes from ``$KUBECONFIG`` (kopf's own login).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os

from _measure import emit_synced, sync_args, sync_baseline, sync_start

args = sync_args()
# kopf's login goes through the `kubernetes` package, which reads $KUBECONFIG when imported.
os.environ["KUBECONFIG"] = args.kubeconfig

import kopf  # noqa: E402


def main() -> None:
    logging.getLogger("kopf").setLevel(logging.WARNING)
    seen: set[str] = set()
    stop = asyncio.Event()
    registry = kopf.OperatorRegistry()

    @kopf.on.login(registry=registry)
    def login(**kwargs: object) -> kopf.ConnectionInfo | None:
        return kopf.login_via_client(**kwargs)  # type: ignore[arg-type]

    @kopf.on.startup(registry=registry)
    def configure(settings: kopf.OperatorSettings, **_: object) -> None:
        settings.posting.enabled = False
        settings.watching.server_timeout = 600

    @kopf.on.event("v1", "configmaps", registry=registry)
    def on_event(name: str, namespace: str, **_: object) -> None:
        seen.add(f"{namespace}/{name}")
        if len(seen) == args.expect:
            stop.set()

    async def run() -> None:
        baseline = sync_baseline()
        start = sync_start()
        operator = asyncio.create_task(
            kopf.operator(
                registry=registry,
                standalone=True,
                namespaces=[args.namespace],
                clusterwide=False,
            )
        )
        synced = asyncio.create_task(stop.wait())
        await asyncio.wait({synced, operator}, timeout=600, return_when=asyncio.FIRST_COMPLETED)
        if not synced.done():
            raise SystemExit(
                f"kopf: saw {len(seen)} of {args.expect} ConfigMaps; operator {operator}"
            )
        emit_synced(
            start,
            objects=len(seen),
            expected=args.expect,
            baseline_rss_kib=baseline,
        )
        operator.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await operator

    asyncio.run(run())


main()
