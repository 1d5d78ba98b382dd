"""The informer factory: one shared informer per (resource, namespace, selectors, shape)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import NamedTuple

from kubectrl._clock import Clock, RealClock
from kubectrl.cache._decisions import ReflectorOptions
from kubectrl.cache._informer import CacheSyncError, Informer, Transform
from kubectrl.cache._listwatch import ListOptions, ListWatch
from kubectrl.cache._reflector import WatchErrorHandler
from kubectrl.cache._store import IndexFunc
from kubectrl.client import AsyncClient, ResourceRef

__all__ = ["InformerFactory", "InformerKey"]


class InformerKey(NamedTuple):
    """What makes two informer requests the same informer."""

    resource: str
    namespace: str
    label_selector: str
    field_selector: str
    metadata_only: bool

    def __str__(self) -> str:
        text = f"{self.resource} in {self.namespace or 'all namespaces'}"
        if self.label_selector:
            text += f" labels={self.label_selector}"
        if self.field_selector:
            text += f" fields={self.field_selector}"
        if self.metadata_only:
            text += " (metadata only)"
        return text


def _resource_name(resource: ResourceRef) -> str:
    if isinstance(resource, tuple) and len(resource) == 2:
        return f"{resource[0]}/{resource[1]}"
    return str(resource)


class InformerFactory:
    """Hands out shared informers, one per (resource, namespace, selectors, metadata-only).

    Guarantees: asking twice for the same key returns the same :class:`Informer`; ``start``
    starts every informer not yet started (call it again after asking for more);
    ``wait_for_cache_sync`` waits for all of them and reports per informer; ``shutdown`` stops
    them all.

    Caveats: factory defaults (namespace, resync, transform, reflector options) apply to
    informers created afterwards.

    Example::

        factory = InformerFactory(client, resync_period=None)
        cms = factory.informer(("v1", "ConfigMap"), namespace="ns")
        factory.start()
        results = await factory.wait_for_cache_sync(timeout=30)   # {key: True, ...}
        ...
        await factory.shutdown()
    """

    def __init__(
        self,
        client: AsyncClient,
        *,
        namespace: str | None = None,
        resync_period: float | None = None,
        transform: Transform | None = None,
        reflector_options: ReflectorOptions | None = None,
        tweak: Callable[[ListOptions], ListOptions] | None = None,
        clock: Clock | None = None,
        on_watch_error: WatchErrorHandler | None = None,
    ) -> None:
        self.client = client
        self.namespace = namespace
        self.resync_period = resync_period
        self.transform = transform
        self.reflector_options = reflector_options
        self.tweak = tweak
        self.clock = clock or RealClock()
        self.on_watch_error = on_watch_error
        self._informers: dict[InformerKey, Informer] = {}

    def informer(
        self,
        resource: ResourceRef,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
        indexers: Mapping[str, IndexFunc] | None = None,
        transform: Transform | None = None,
    ) -> Informer:
        """The shared informer for this key, created on first request.

        ``namespace=None`` uses the factory's namespace (itself ``None``: all namespaces).
        ``indexers`` given for an existing informer are added to it (duplicates raise).
        ``metadata_only=True`` caches ``PartialObjectMetadata`` objects only.
        """
        namespace = namespace if namespace is not None else self.namespace
        key = InformerKey(
            _resource_name(resource),
            namespace or "",
            label_selector or "",
            field_selector or "",
            metadata_only,
        )
        informer = self._informers.get(key)
        if informer is None:
            list_watch = ListWatch(
                self.client,
                resource,
                namespace=namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                tweak=self.tweak,
                metadata_only=metadata_only,
            )
            informer = Informer(
                list_watch,
                indexers=indexers,
                transform=transform or self.transform,
                resync_period=self.resync_period,
                reflector_options=self.reflector_options,
                clock=self.clock,
                on_watch_error=self.on_watch_error,
            )
            self._informers[key] = informer
        elif indexers:
            informer.add_indexers(indexers)
        return informer

    @property
    def informers(self) -> dict[InformerKey, Informer]:
        """Every informer handed out so far."""
        return dict(self._informers)

    def start(self) -> None:
        """Start every informer not started yet (on the running loop)."""
        for informer in self._informers.values():
            informer.start()

    async def wait_for_cache_sync(
        self, timeout: float | None = None, *, raise_on_failure: bool = False
    ) -> dict[InformerKey, bool]:
        """Wait (up to ``timeout`` seconds in all) for every started informer to sync.

        Returns ``{key: synced}``. With ``raise_on_failure=True`` an unsynced informer raises
        :class:`CacheSyncError` naming each one and its last error instead.
        """
        informers = dict(self._informers)
        results = await asyncio.gather(
            *(i.wait_for_cache_sync(timeout) for i in informers.values()), return_exceptions=True
        )
        out: dict[InformerKey, bool] = {}
        failures: dict[str, BaseException | None] = {}
        messages: list[str] = []
        for (key, informer), result in zip(informers.items(), results, strict=False):
            out[key] = result is None
            if result is not None:
                if not isinstance(result, CacheSyncError):
                    raise result
                failures[informer.name] = informer.last_error
                messages.append(str(result))
        if failures and raise_on_failure:
            raise CacheSyncError("; ".join(messages), failures)
        return out

    async def shutdown(self) -> None:
        """Stop every informer."""
        await asyncio.gather(*(i.stop() for i in self._informers.values()))

    def __repr__(self) -> str:
        return f"<InformerFactory informers={len(self._informers)}>"
