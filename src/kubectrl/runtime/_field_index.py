"""Field indexes on the manager's cache (controller-runtime's ``FieldIndexer``).

``manager.field_indexer.index_field(V1Job, "metadata.controller", fn)`` files every cached Job
under the values ``fn`` extracts from it; ``manager.client.list(V1Job, namespace="ns",
matching_fields={"metadata.controller": "backup"})`` then answers from that index instead of
scanning the cache.

As in controller-runtime, the index (named ``field:<field>``) stores each value twice for a
namespaced object: as ``<namespace>/<value>``, read by a list in that namespace, and as
``__all_namespaces/<value>``, read by a list across namespaces; a cluster-scoped object only
under the latter. The index lives on the kind's shared informer in the manager's
:class:`~kubectrl.cache.InformerFactory` (the one the cached client reads): registering creates
that informer if nobody asked for it yet (the manager starts it with the others), and
registering on a running informer backfills the index over the objects already cached.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, overload

from kubectrl.cache import Informer, InformerFactory
from kubectrl.client import APIResource, KindRef, ResourceRef
from kubectrl.errors import KubectrlError
from kubectrl.objects import (
    GroupVersionKind,
    GroupVersionResource,
    meta_namespace_key,
    metadata_of,
)
from kubectrl.runtime._kind_source import normalize_resource
from kubectrl.runtime._typed import model_view

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "ALL_NAMESPACES",
    "FieldIndexError",
    "FieldIndexer",
    "field_index_name",
    "namespaced_index_key",
]

#: A model class's instances (the kind an index function receives).
M = TypeVar("M", bound="BaseModel")

log = logging.getLogger("kubectrl.runtime")

#: The namespace part of an index key that matches objects of every namespace.
ALL_NAMESPACES = "__all_namespaces"


def field_index_name(field: str) -> str:
    """The name of the index over ``field`` in an informer's indexer.

    Example::

        >>> field_index_name("metadata.controller")
        'field:metadata.controller'
    """
    return f"field:{field}"


def namespaced_index_key(namespace: str | None, value: str) -> str:
    """The index key of ``value`` for a list in ``namespace`` (``None`` or ``""``: every
    namespace).

    Example::

        >>> namespaced_index_key("ns", "web"), namespaced_index_key(None, "web")
        ('ns/web', '__all_namespaces/web')
    """
    return f"{namespace or ALL_NAMESPACES}/{value}"


class FieldIndexError(KubectrlError, ValueError):
    """An index function failed on cached objects, so an index read would miss them.

    Raised by a list that reads the index while any cached object's index function raised (or
    returned something other than a list of strings); ``failures`` maps each such object's key
    to the error. The informer itself keeps going; fix the function (or the object) and the
    next event of the object indexes it again.
    """

    def __init__(self, what: str, field: str, failures: Mapping[str, BaseException]) -> None:
        shown = ", ".join(f"{key}: {err!r}" for key, err in sorted(failures.items())[:5])
        more = f" and {len(failures) - 5} more" if len(failures) > 5 else ""
        super().__init__(
            f"the field index {field!r} of {what} is incomplete: its index function failed on "
            f"{shown}{more}"
        )
        self.failures = dict(failures)


class _FieldIndex:
    """One registered index: the user's function wrapped into an informer index function."""

    def __init__(
        self,
        resource: KindRef,
        field: str,
        extract: Callable[[Any], list[str]],
    ) -> None:
        self.resource = resource
        self.field = field
        self.extract = extract
        self.model = resource if isinstance(resource, type) else None
        self.api_version, self.kind = _api_version_kind(resource)
        self._lock = threading.Lock()
        # key -> (the object the function failed on, the error); the object itself is kept so
        # that a failure recorded while the store unindexes an old version does not count.
        self._failures: dict[str, tuple[Mapping[str, Any], BaseException]] = {}

    def values(self, obj: Mapping[str, Any]) -> list[str]:
        key = meta_namespace_key(obj)
        try:
            subject: Any = obj
            if self.model is not None:
                subject = model_view(self.model, obj, self.api_version, self.kind)
            raw = self.extract(subject)
            values = _checked_values(raw)
        except Exception as err:  # an index function must not stop the informer
            log.error(
                "field index function failed; the object is not indexed",
                extra={"field": self.field, "object": key, "error": repr(err)},
            )
            with self._lock:
                self._failures[key] = (obj, err)
            return []
        with self._lock:
            self._failures.pop(key, None)
        namespace = str(metadata_of(obj).get("namespace") or "")
        keys = [namespaced_index_key(None, value) for value in values]
        if namespace:
            keys += [namespaced_index_key(namespace, value) for value in values]
        return keys

    def failures(self, informer: Informer) -> dict[str, BaseException]:
        """The failures of objects still cached as they were when the function failed."""
        with self._lock:
            failures = dict(self._failures)
        current: dict[str, BaseException] = {}
        for key, (obj, err) in failures.items():
            if informer.indexer.get_by_key(key) is obj:
                current[key] = err
        return current


def _checked_values(raw: object) -> list[str]:
    if isinstance(raw, (str, bytes)) or not isinstance(raw, (list, tuple, set, frozenset)):
        raise TypeError(
            f"an index function must return a list of strings, not {type(raw).__name__} ({raw!r})"
        )
    bad = [v for v in raw if not isinstance(v, str)]
    if bad:
        raise TypeError(f"an index function must return strings only, got {bad[0]!r}")
    return list(raw)


def _api_version_kind(resource: KindRef) -> tuple[str, str]:
    ref = normalize_resource(resource)
    if isinstance(ref, APIResource):
        return ref.api_version, ref.kind
    if isinstance(ref, GroupVersionResource):
        return "", ""  # the kind is known once resolved
    if isinstance(ref, GroupVersionKind):
        return ref.api_version, ref.kind
    api_version, kind = ref
    return api_version, kind


def describe_kind(resource: KindRef) -> str:
    """How an error names a kind: ``V1Job`` for a class, ``('batch/v1', 'Job')`` otherwise."""
    if isinstance(resource, type):
        return resource.__name__
    return repr(resource)


class FieldIndexer:
    """Registers field indexes on the manager's cache (``manager.field_indexer``,
    controller-runtime's ``mgr.GetFieldIndexer()``).

    Guarantees: :meth:`index_field` may be called before the manager starts or while it runs
    (the index is backfilled over what is cached); a list with ``matching_fields`` on the
    cached client reads the index in O(matches), scoped to its namespace. An index function
    that raises (or returns anything but a list of strings) leaves that object out of the
    index and is logged; a list reading the index then raises :class:`FieldIndexError` naming
    the objects, rather than silently missing them.

    The function receives what the kind names: an instance of the model class for a model class
    (``V1Job``, a custom resource class; built afresh from the cached dict for every call, so
    typed indexing costs a model construction per event), the cached dict for a tuple kind,
    GVK or GVR (never mutate it). The cache itself keeps storing dicts.

    Caveats: one index per (kind, field); registering it twice raises ``ValueError``. The index
    is on the informer the cached client reads (the factory's namespace, no selectors).

    Example::

        def job_owner(job: V1Job) -> list[str]:
            owners = job.metadata.owner_references or []
            return [ref.name for ref in owners if ref.controller and ref.kind == "CronJob"]

        manager.field_indexer.index_field(V1Job, "metadata.controller", job_owner)
        jobs = await manager.client.list(
            V1Job, namespace="ns", matching_fields={"metadata.controller": "backup"}
        )
    """

    def __init__(self, factory: InformerFactory) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        # (apiVersion/kind or the spelling, field) -> index, to refuse duplicates early and to
        # find an index's bookkeeping from a read.
        self._indexes: dict[tuple[str, str], _FieldIndex] = {}

    @overload
    def index_field(
        self, resource: type[M], field: str, extract: Callable[[M], list[str]]
    ) -> None: ...
    @overload
    def index_field(
        self,
        resource: ResourceRef,
        field: str,
        extract: Callable[[dict[str, Any]], list[str]],
    ) -> None: ...
    def index_field(
        self, resource: KindRef, field: str, extract: Callable[[Any], list[str]]
    ) -> None:
        """Index the cached objects of ``resource`` by ``field``: ``extract(obj)`` returns the
        values an object is listed under (``[]``: not listed).

        ``field`` is the name lists ask for in ``matching_fields`` (any non-empty string
        without ``,``, ``=`` or ``!``; controller-runtime's examples often start it with a
        dot, e.g. ``".metadata.controller"``, kubectrl takes the name as written). Raises
        ``ValueError`` for a bad field name or a (kind, field) already indexed, ``TypeError``
        when ``extract`` is not callable.

        Example::

            manager.field_indexer.index_field(
                ("v1", "Pod"), "spec.nodeName", lambda pod: [pod["spec"].get("nodeName", "")]
            )
        """
        if not isinstance(field, str) or not field or any(c in field for c in ",=!"):
            raise ValueError(
                f"index_field: {field!r} is not a field name (a non-empty string without ',', "
                "'=' or '!', e.g. 'metadata.controller')"
            )
        if not callable(extract):
            raise TypeError(f"index_field: the index function must be callable, not {extract!r}")
        api_version, kind = _api_version_kind(resource)
        spelled = f"{api_version}/{kind}" if kind else str(normalize_resource(resource))
        with self._lock:
            if (spelled, field) in self._indexes:
                raise ValueError(
                    f"the field {field!r} of {describe_kind(resource)} is already indexed "
                    "(one index function per kind and field)"
                )
            index = _FieldIndex(resource, field, extract)
            informer = self._factory.informer(normalize_resource(resource))
            informer.add_indexers({field_index_name(field): index.values})
            self._indexes[spelled, field] = index

    def index_for(self, res: APIResource, field: str) -> _FieldIndex | None:
        """The registration of ``field`` for the resolved kind ``res`` (``None``: none)."""
        with self._lock:
            for spelled in (f"{res.api_version}/{res.kind}", str(res.gvr)):
                index = self._indexes.get((spelled, field))
                if index is not None:
                    return index
        return None

    def fields(self, res: APIResource) -> list[str]:
        """The fields indexed for the resolved kind ``res`` (sorted)."""
        with self._lock:
            names = {f"{res.api_version}/{res.kind}", str(res.gvr)}
            return sorted(field for spelled, field in self._indexes if spelled in names)

    def __repr__(self) -> str:
        return f"<FieldIndexer indexes={len(self._indexes)}>"
