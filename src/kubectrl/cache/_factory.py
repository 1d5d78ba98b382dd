"""The informer factory: one shared informer per resolved resource, namespace, selectors, shape.

Informers are keyed by what the server resolves a kind to (group, version and plural resource,
through the client's RESTMapper), never by how the caller spelled it: ``("apps/v1",
"Deployment")``, ``GroupVersionKind("apps", "v1", "Deployment")`` and
``GroupVersionResource("apps", "v1", "deployments")`` share one list+watch and one store, as
client-go's ``sharedInformerFactory`` (one informer per type) and controller-runtime's informer
cache (one per resolved GVK) do. Label selectors are keyed in a normal form (any
:data:`kubectrl.labels.LabelSelectorLike`, requirements sorted), and a namespace asked for a
cluster-scoped resource is ignored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import NamedTuple

from kubectrl._internal.clock import Clock, RealClock
from kubectrl._internal.defaults import DEFAULT, Default
from kubectrl.cache._decisions import ReflectorOptions
from kubectrl.cache._informer import CacheSyncError, Informer, Transform
from kubectrl.cache._listwatch import ListOptions, ListWatch, resource_ref
from kubectrl.cache._reflector import WatchErrorHandler
from kubectrl.cache._shard import ShardSelector
from kubectrl.cache._store import IndexFunc
from kubectrl.client import APIResource, AsyncClient, KindRef, ResourceRef
from kubectrl.labels import LabelSelectorLike, Requirement, parse
from kubectrl.objects import GroupVersionKind, GroupVersionResource

__all__ = ["InformerFactory", "InformerKey"]


class InformerKey(NamedTuple):
    """What makes two informer requests the same informer.

    ``resource`` is the resolved ``plural.version.group`` (``deployments.v1.apps``); before the
    kind was resolved (a synchronous request for a kind never resolved yet) it is the kind's
    spelling (``apps/v1, Kind=Deployment``) until a resolved request adopts the informer.
    ``label_selector`` is in normal form (requirements sorted); ``shard`` is the shard
    selector's text (``""``: the whole collection).
    """

    resource: str
    namespace: str
    label_selector: str
    field_selector: str
    metadata_only: bool
    shard: str = ""

    def __str__(self) -> str:
        text = f"{self.resource} in {self.namespace or 'all namespaces'}"
        if self.label_selector:
            text += f" labels={self.label_selector}"
        if self.field_selector:
            text += f" fields={self.field_selector}"
        if self.metadata_only:
            text += " (metadata only)"
        if self.shard:
            text += f" shard={self.shard}"
        return text


Spelling = GroupVersionKind | GroupVersionResource


def _spelling(resource: ResourceRef) -> Spelling:
    # The name a request gives, made comparable without asking the server: a kind's three
    # spellings (model class, tuple and GroupVersionKind) are one GroupVersionKind.
    if isinstance(resource, APIResource):
        return resource.gvr
    if isinstance(resource, (GroupVersionKind, GroupVersionResource)):
        return resource
    return GroupVersionKind.from_api_version(*resource)


def _requirement_key(requirement: Requirement) -> str:
    # One value "in" and "=" mean the same (key present with that value); so do "notin" / "!=".
    if requirement.operator in ("In", "NotIn") and len(requirement.values) == 1:
        op = "=" if requirement.operator == "In" else "!="
        return f"{requirement.key}{op}{requirement.values[0]}"
    return str(requirement)


def _selector_key(selector: LabelSelectorLike) -> str:
    return ",".join(sorted({_requirement_key(r) for r in parse(selector).requirements}))


class InformerFactory:
    """Hands out shared informers, one per (resolved resource, namespace, selectors,
    metadata-only).

    Guarantees: asking twice for the same key returns the same :class:`Informer`, whatever the
    spelling of the kind (a model class such as ``V1Deployment``, ``("apps/v1", "Deployment")``,
    a ``GroupVersionKind``, a
    ``GroupVersionResource``, an ``APIResource``) and of the label selector (any
    :data:`kubectrl.labels.LabelSelectorLike`); ``start`` starts every informer not yet
    started (call it again after asking for more); ``wait_for_cache_sync`` waits for all of
    them and reports per informer; ``shutdown`` stops them all.

    :meth:`get_informer` resolves the kind through the client's discovery first. The
    synchronous :meth:`informer` resolves from what this factory already resolved; for a kind it
    has not resolved yet it files the informer under the kind's spelling, and the first resolved
    request for that kind (any spelling) adopts it.

    Informers drop ``metadata.managedFields`` before storing objects (see :class:`Informer`);
    ``keep_managed_fields=True`` keeps it in every informer of the factory.

    Caveats: factory defaults (namespace, resync, transform, reflector options) apply to
    informers created afterwards. A ``GroupVersionResource`` and a kind that were both only ever
    asked for synchronously, before either was resolved, cannot be matched without the server:
    call :meth:`get_informer` (or pass an ``APIResource``) to be sure.

    Example::

        factory = InformerFactory(client, resync_period=None)
        cms = await factory.get_informer(("v1", "ConfigMap"), namespace="ns")
        assert factory.informer(GroupVersionResource("", "v1", "configmaps"), namespace="ns") is cms
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
        keep_managed_fields: bool = False,
        shard: ShardSelector | None = None,
    ) -> None:
        self.client = client
        #: The shard every informer lists and watches unless asked otherwise (``None``: all).
        self.shard = shard
        self.keep_managed_fields = keep_managed_fields
        self.namespace = namespace
        self.resync_period = resync_period
        self.transform = transform
        self.reflector_options = reflector_options
        self.tweak = tweak
        self.clock = clock or RealClock()
        self.on_watch_error = on_watch_error
        self._informers: dict[InformerKey, Informer] = {}
        # Every spelling seen resolved, to its APIResource (fills the synchronous path). Keyed
        # with the type too: a GroupVersionKind and a GroupVersionResource are plain tuples and
        # compare equal when their strings do.
        self._resolved: dict[tuple[type, Spelling], APIResource] = {}

    async def get_informer(
        self,
        resource: KindRef,
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
        indexers: Mapping[str, IndexFunc] | None = None,
        transform: Transform | None = None,
        shard: ShardSelector | Default | None = DEFAULT,
    ) -> Informer:
        """The shared informer for this key, resolving the kind through discovery first
        (controller-runtime's ``Cache.GetInformer``); created on first request.

        Raises :class:`~kubectrl.errors.ResourceNotFoundError` if the server serves no such
        kind. Arguments are those of :meth:`informer`.

        Example::

            deployments = await factory.get_informer(GroupVersionResource("apps", "v1",
                                                                          "deployments"))
        """
        resource = resource_ref(resource)
        spelling = _spelling(resource)
        if (type(spelling), spelling) not in self._resolved:
            api = await self.client.resource(resource)
            self._remember(spelling, api)
        return self.informer(
            resource,
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            metadata_only=metadata_only,
            indexers=indexers,
            transform=transform,
            shard=shard,
        )

    def informer(
        self,
        resource: KindRef,
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
        indexers: Mapping[str, IndexFunc] | None = None,
        transform: Transform | None = None,
        shard: ShardSelector | Default | None = DEFAULT,
    ) -> Informer:
        """The shared informer for this key, created on first request (no I/O).

        ``namespace=None`` uses the factory's namespace (itself ``None``: all namespaces).
        ``label_selector`` takes any :data:`kubectrl.labels.LabelSelectorLike`.
        ``indexers`` given for an existing informer are added to it (duplicates raise).
        ``metadata_only=True`` caches ``PartialObjectMetadata`` objects only. ``shard`` (a
        :class:`~kubectrl.cache.ShardSelector`) caches one shard only; by default the factory's
        ``shard``, ``None`` for the whole collection. Two shards of one kind are two informers.

        Example::

            cms = factory.informer(("v1", "ConfigMap"), namespace="ns",
                                   label_selector={"app": "web"})
        """
        namespace = namespace if namespace is not None else self.namespace
        resource = resource_ref(resource)
        spelling = _spelling(resource)
        if isinstance(resource, APIResource):
            self._remember(spelling, resource)
        api = self._resolved.get((type(spelling), spelling))
        selector = _selector_key(label_selector)
        the_shard = self.shard if isinstance(shard, Default) else shard
        rest = (selector, field_selector or "", metadata_only, str(the_shard or ""))
        provisional = InformerKey(str(spelling), namespace or "", *rest)
        if api is None:
            key = provisional
        else:
            key = InformerKey(str(api.gvr), namespace or "" if api.namespaced else "", *rest)
            by_kind = InformerKey(str(api.gvk), namespace or "", *rest)
            self._adopt(key, provisional, by_kind, api=api)
        informer = self._informers.get(key)
        if informer is None:
            list_watch = ListWatch(
                self.client,
                api or resource,
                namespace=namespace if api is None or api.namespaced else None,
                label_selector=label_selector,
                field_selector=field_selector,
                tweak=self.tweak,
                metadata_only=metadata_only,
                shard=the_shard,
            )
            informer = Informer(
                list_watch,
                indexers=indexers,
                transform=transform or self.transform,
                resync_period=self.resync_period,
                reflector_options=self.reflector_options,
                clock=self.clock,
                on_watch_error=self.on_watch_error,
                keep_managed_fields=self.keep_managed_fields,
            )
            self._informers[key] = informer
        elif indexers:
            informer.add_indexers(indexers)
        return informer

    def _remember(self, spelling: Spelling, api: APIResource) -> None:
        for name in (spelling, api.gvk, api.gvr):
            self._resolved[type(name), name] = api

    def _adopt(self, key: InformerKey, *provisional: InformerKey, api: APIResource) -> None:
        # An informer filed under a spelling before its kind was resolved becomes the resolved
        # key's informer, unless one is there already (then the provisional one stays apart).
        for old in provisional:
            if key in self._informers:
                return
            informer = self._informers.pop(old, None)
            if informer is not None:
                list_watch = informer.list_watch
                if isinstance(list_watch, ListWatch):
                    list_watch.resource = api  # spares the reflector a discovery lookup
                self._informers[key] = informer
                return

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
