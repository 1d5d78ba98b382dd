"""Listers: read-only, typed-by-convention views of an informer's store."""

from __future__ import annotations

from typing import Any

from kubectrl._internal.selector import parse_label_selector
from kubectrl.cache._store import NAMESPACE_INDEX, Indexer
from kubectrl.errors import NotFoundError
from kubectrl.labels import LabelSelectorLike

ObjectList = list[dict[str, Any]]

__all__ = ["Lister", "NamespaceLister"]


class Lister:
    """Reads from an informer's store (client-go's generated listers, for plain dicts).

    Guarantees: never calls the server; safe from any thread; returns the shared cached dicts
    (do not mutate them).

    Selectors: a string, a ``{label: value}`` mapping, or a ``metav1.LabelSelector`` with
    ``matchExpressions`` (see :mod:`kubectrl.labels`), evaluated in memory.

    Caveats: the cache lags the server (a write you just made may not be visible yet).

    Example::

        lister = informer.lister
        web = lister.list("app=web")
        cm = lister.namespace("default").get("settings")   # raises NotFoundError if absent
    """

    def __init__(self, indexer: Indexer, *, resource: str = "") -> None:
        self.indexer = indexer
        self.resource = resource

    def list(self, selector: LabelSelectorLike = None) -> ObjectList:
        """Cached objects matching the label ``selector`` (all when ``None``), sorted by key.

        ``selector`` takes every form of :data:`kubectrl.labels.LabelSelectorLike`; a
        ``metav1.LabelSelector``'s ``matchExpressions`` are evaluated locally.

        Example::

            lister.list({"matchExpressions": [{"key": "tier", "operator": "NotIn",
                                               "values": ["canary"]}]})
        """
        match = parse_label_selector(selector)
        items = self.indexer.items()
        return [items[key] for key in sorted(items) if match(items[key])]

    def get(self, name: str) -> dict[str, Any]:
        """A cluster-scoped object by name; raises :class:`~kubectrl.errors.NotFoundError`."""
        obj = self.indexer.get_by_key(name)
        if obj is None:
            raise _not_found(self.resource, None, name)
        return obj

    def namespace(self, namespace: str) -> NamespaceLister:
        """A lister restricted to ``namespace``."""
        return NamespaceLister(self.indexer, namespace, resource=self.resource)


class NamespaceLister:
    """A :class:`Lister` for one namespace.

    Example::

        pods = informer.lister.namespace("ns").list({"app": "web"})
    """

    def __init__(self, indexer: Indexer, namespace: str, *, resource: str = "") -> None:
        self.indexer = indexer
        self.namespace_name = namespace
        self.resource = resource

    def list(self, selector: LabelSelectorLike = None) -> ObjectList:
        """Objects in this namespace matching ``selector`` (any ``LabelSelectorLike``), sorted by
        key."""
        match = parse_label_selector(selector)
        return [o for o in self.indexer.by_index(NAMESPACE_INDEX, self.namespace_name) if match(o)]

    def get(self, name: str) -> dict[str, Any]:
        """The object ``name`` in this namespace; raises :class:`~kubectrl.errors.NotFoundError`.

        Example::

            try:
                cm = lister.namespace("ns").get("settings")
            except NotFoundError:
                ...
        """
        obj = self.indexer.get_by_key(f"{self.namespace_name}/{name}")
        if obj is None:
            raise _not_found(self.resource, self.namespace_name, name)
        return obj


def _not_found(resource: str, namespace: str | None, name: str) -> NotFoundError:
    what = resource or "object"
    return NotFoundError(
        f'{what} "{name}" not found in the cache',
        reason="NotFound",
        verb="get",
        resource=resource,
        namespace=namespace,
        name=name,
    )
