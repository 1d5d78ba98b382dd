"""A sharding Manager's leader-only controllers: templates each shard copies.

With ``ManagerOptions.sharding``, :meth:`Manager.add` keeps a leader-only
:class:`~kubectrl.runtime.Controller` as a template instead of running it: a
:class:`~kubectrl.runtime.ShardedRunner` (one runnable on every replica) builds a copy per
shard this replica holds, on that shard's cache (see docs/scaling.md). This module holds the
templates, the kinds they shard, and the runner.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from kubectrl._internal.clock import Clock
from kubectrl.cache import InformerFactory
from kubectrl.client import AsyncClient, KindRef
from kubectrl.runtime._controller import Controller
from kubectrl.runtime._kind_source import KindSource
from kubectrl.runtime._manager_options import ManagerOptions
from kubectrl.runtime._sharding import (
    ShardContext,
    ShardedRunner,
    ShardingOptions,
    _kind_key,
    _RoutingInformerFactory,
    shard_controllers,
)

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["ShardTemplates", "routing_informer_factory"]


def routing_informer_factory() -> type[InformerFactory]:
    """The informer factory class of a sharding manager (routes sharded kinds per shard)."""
    return _RoutingInformerFactory


class ShardTemplates:
    """The templates of a sharding manager's controllers and the runner that copies them.

    Example::

        templates = ShardTemplates(api, options, factory, clock=clock, registry=registry)
        manager.add(templates.runner, need_leader_election=False)
        templates.add(controller, started=False, names=names)
    """

    def __init__(
        self,
        api: AsyncClient,
        options: ManagerOptions,
        sharding: ShardingOptions,
        factory: InformerFactory,
        *,
        clock: Clock,
        registry: CollectorRegistry | None,
    ) -> None:
        self._sharding = sharding
        self._factory = factory
        self.controllers: list[Controller] = []
        self.kinds: set[KindRef] = set()

        def setup(context: ShardContext) -> list[Controller]:
            return shard_controllers(self.controllers, context, self._factory)

        self.runner = ShardedRunner(
            api,
            sharding,
            setup,
            clock=clock,
            registry=registry,
            factory_options={
                "namespace": options.cache_namespace,
                "resync_period": options.sync_period,
                "keep_managed_fields": options.cache_keep_managed_fields,
            },
            stop_timeout=options.graceful_shutdown_timeout,
            kinds=self.kinds,  # read as each shard starts
        )

    def add(self, controller: Controller, *, started: bool, names: set[str]) -> None:
        """Keep ``controller`` as a template (its name joins ``names``); before start only."""
        if started:
            raise RuntimeError(
                f"controller {controller.name}: a sharding manager takes its controllers before "
                "start() (each shard builds its copies when it starts)"
            )
        sources = [s for s in controller.sources if isinstance(s, KindSource)]
        if not sources or len(sources) != len(controller.sources):
            raise ValueError(
                f"sharded controller {controller.name}: every source must be a KindSource on "
                "the manager's cache (a shard rebuilds them on its own cache); add it with "
                "need_leader_election=False to run it unsharded on every replica"
            )
        if controller.name in names:
            raise ValueError(f"a controller named {controller.name!r} was already added")
        names.add(controller.name)
        self.controllers.append(controller)
        for index, source in enumerate(sources):
            if index == 0 or self._sharding.field == "namespace":
                self.kinds.add(source.kind)

    def discard_unused_informers(self, runnables: Iterable[object]) -> None:
        """Drop the templates' informers of sharded kinds from the manager's cache.

        A sharded kind is cached per shard, so the manager's own informer for it (made when
        the Builder wired the template) is never started, unless one of ``runnables`` (the
        manager's other runnables) uses it too.
        """
        factory = self._factory
        if not isinstance(factory, _RoutingInformerFactory):
            return
        kinds = {_kind_key(k) for k in self.kinds}
        used = {
            id(source.informer)
            for runnable in runnables
            for source in getattr(runnable, "sources", ())
            if isinstance(source, KindSource)
        }
        for template in self.controllers:
            for source in template.sources:
                if (
                    isinstance(source, KindSource)
                    and _kind_key(source.kind) in kinds
                    and id(source.informer) not in used
                ):
                    factory.discard(source.informer)
