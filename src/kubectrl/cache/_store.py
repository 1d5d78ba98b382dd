"""The thread-safe, indexed store behind every informer.

One writer (the informer, on the event loop) and many readers (handlers, listers, sync reconcilers
in worker threads). A single :class:`threading.RLock` guards the maps; every read takes it only
long enough to copy out references, so readers never see a half-applied ``replace``.

Objects are stored as the dicts the server sent (after the informer's transform) and handed out
*without copying*: they are shared and must not be mutated. Setting the environment variable
``KUBECTRL_CACHE_MUTATION_DETECTOR=1`` keeps a deep copy of every stored object and reports any
cached object that changed behind the store's back (client-go's ``KUBE_CACHE_MUTATION_DETECTOR``).
"""

from __future__ import annotations

import copy
import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubectrl.errors import KubectrlError
from kubectrl.objects import meta_namespace_key, metadata_of

__all__ = [
    "NAMESPACE_INDEX",
    "CacheMutationError",
    "IndexFunc",
    "Indexer",
    "KeyFunc",
    "namespace_index_func",
]

log = logging.getLogger("kubectrl.cache")

#: An object dict as cached: the decoded JSON the server sent.
Object = dict[str, Any]
#: Maps an object to its store key (default: ``namespace/name`` or ``name``).
KeyFunc = Callable[[Mapping[str, Any]], str]
#: Maps an object to the index values it is filed under (an empty list: not indexed).
IndexFunc = Callable[[Mapping[str, Any]], "list[str]"]
ObjectList = list[Object]
StrList = list[str]

#: Name of the index every :class:`Indexer` has: objects by ``metadata.namespace``.
NAMESPACE_INDEX = "namespace"

MUTATION_DETECTOR_ENV = "KUBECTRL_CACHE_MUTATION_DETECTOR"


def namespace_index_func(obj: Mapping[str, Any]) -> list[str]:
    """client-go's ``MetaNamespaceIndexFunc``: ``[metadata.namespace]``, ``[""]`` if cluster-scoped.

    Example::

        >>> namespace_index_func({"metadata": {"namespace": "ns", "name": "a"}})
        ['ns']
    """
    meta = obj.get("metadata")
    if meta.__class__ is dict:
        namespace = meta.get("namespace")
        if namespace.__class__ is str:
            return [namespace]
    return [str(metadata_of(obj).get("namespace") or "")]


class CacheMutationError(KubectrlError):
    """A cached object was changed in place (found by the mutation detector).

    Cached objects are shared between every reader; copy before changing one
    (``copy.deepcopy(obj)``). ``keys`` names the mutated objects.
    """

    def __init__(self, keys: list[str]) -> None:
        super().__init__(
            f"cached objects were mutated in place: {', '.join(sorted(keys))} "
            "(cached objects are shared; deep-copy before changing them)"
        )
        self.keys = keys


def _mutation_detector_enabled() -> bool:
    return os.environ.get(MUTATION_DETECTOR_ENV, "").lower() in {"1", "true", "yes", "on"}


class Indexer:
    """A thread-safe map of key -> object with named secondary indexes.

    Keys are ``namespace/name`` (``name`` for cluster-scoped objects) unless ``key_func`` says
    otherwise. An index function maps an object to a list of index values; ``by_index(name,
    value)`` returns the objects filed under that value. The ``"namespace"`` index is built in.

    Guarantees:

    - Every method is atomic with respect to every other (one re-entrant lock), so a reader in a
      worker thread sees the store before or after a ``replace``, never halfway.
    - Indexes are always consistent with the objects: adding an index later backfills it.
    - Reads return the stored dicts themselves (no copies) and fresh lists.

    Caveats: objects are shared; never mutate one (enable the mutation detector with
    ``KUBECTRL_CACHE_MUTATION_DETECTOR=1`` to find code that does). Only the informer should
    write; writing from several places breaks its event ordering.

    Memory use: the objects plus, per index, one set of keys per distinct value; the mutation
    detector doubles the object memory.

    Example::

        >>> idx = Indexer({"by-app": lambda o: [o["metadata"].get("labels", {}).get("app", "")]})
        >>> idx.add({"metadata": {"namespace": "ns", "name": "a", "labels": {"app": "web"}}})
        >>> idx.index_keys("by-app", "web"), idx.index_keys("namespace", "ns")
        (['ns/a'], ['ns/a'])
    """

    def __init__(
        self,
        indexers: Mapping[str, IndexFunc] | None = None,
        *,
        key_func: KeyFunc = meta_namespace_key,
        detect_mutations: bool | None = None,
    ) -> None:
        self._lock = threading.RLock()
        self._key_func = key_func
        self._items: dict[str, Object] = {}
        self._index_funcs: dict[str, IndexFunc] = {NAMESPACE_INDEX: namespace_index_func}
        # index name -> value -> keys
        self._indices: dict[str, dict[str, set[str]]] = {NAMESPACE_INDEX: {}}
        if detect_mutations is None:
            detect_mutations = _mutation_detector_enabled()
        self._copies: dict[str, Object] | None = {} if detect_mutations else None
        if indexers:
            self.add_indexers(indexers)

    # ----------------------------------------------------------------- keys

    def key_of(self, obj: Mapping[str, Any]) -> str:
        """The store key of ``obj`` (``namespace/name`` or ``name`` by default)."""
        return self._key_func(obj)

    # ----------------------------------------------------------------- writes

    def add(self, obj: Object) -> None:
        """Insert or replace the object under its key. Example: ``indexer.add(cm)``."""
        with self._lock:
            self._put(self._key_func(obj), obj)

    def update(self, obj: Object) -> None:
        """Same as :meth:`add` (client-go keeps both names)."""
        self.add(obj)

    def delete(self, obj: Mapping[str, Any]) -> Object | None:
        """Remove the object with ``obj``'s key; return what was stored (``None`` if absent)."""
        return self.delete_key(self._key_func(obj))

    def delete_key(self, key: str) -> Object | None:
        """Remove ``key``; return what was stored (``None`` if absent)."""
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._check_copy(key, old)
                self._unindex(key, old)
                if self._copies is not None:
                    self._copies.pop(key, None)
            return old

    def replace(self, items: Iterable[Object]) -> dict[str, Object]:
        """Atomically swap the whole content for ``items``; return the previous key -> object map.

        Readers see either the old content or the new one. Indexes are rebuilt.

        Example::

            previous = indexer.replace(listed_items)
            vanished = previous.keys() - set(indexer.list_keys())
        """
        key_func = self._key_func
        return self._replace_keyed({key_func(obj): obj for obj in items})

    def _replace_keyed(self, new_items: dict[str, Object]) -> dict[str, Object]:
        """:meth:`replace` with the keys already computed (the informer's path); takes
        ``new_items`` as the new content."""
        with self._lock:
            if self._copies is not None:
                self.verify_no_mutations(raise_error=False)
            funcs = dict(self._index_funcs)
            new_indices: dict[str, dict[str, set[str]]] = {name: {} for name in funcs}
            for name, func in funcs.items():
                index = new_indices[name]
                for key, obj in new_items.items():
                    for value in func(obj):
                        keys = index.get(value)
                        if keys is None:
                            index[value] = {key}
                        else:
                            keys.add(key)
            previous, self._items, self._indices = self._items, new_items, new_indices
            if self._copies is not None:
                self._copies = {key: copy.deepcopy(obj) for key, obj in new_items.items()}
            return previous

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add named index functions, backfilling them over the objects already stored.

        Raises ``ValueError`` when a name is already taken (the whole call then changes nothing).

        Example::

            indexer.add_indexers({"by-node": lambda pod: [pod["spec"].get("nodeName", "")]})
        """
        with self._lock:
            taken = sorted(set(indexers) & set(self._index_funcs))
            if taken:
                raise ValueError(f"indexer conflict: index(es) {', '.join(taken)} already exist")
            for name, func in indexers.items():
                index: dict[str, set[str]] = {}
                for key, obj in self._items.items():
                    for value in func(obj):
                        index.setdefault(value, set()).add(key)
                self._index_funcs[name] = func
                self._indices[name] = index

    def _put_keyed(self, key: str, obj: Object) -> Object | None:
        """Insert or replace ``obj`` under ``key`` (already computed); return what it replaced."""
        with self._lock:
            old = self._items.get(key)
            self._put(key, obj)
            return old

    def _put(self, key: str, obj: Object) -> None:
        old = self._items.get(key)
        if old is not None:
            self._check_copy(key, old)
            self._unindex(key, old)
        self._items[key] = obj
        for name, func in self._index_funcs.items():
            index = self._indices[name]
            for value in func(obj):
                index.setdefault(value, set()).add(key)
        if self._copies is not None:
            self._copies[key] = copy.deepcopy(obj)

    def _unindex(self, key: str, obj: Object) -> None:
        for name, func in self._index_funcs.items():
            index = self._indices[name]
            for value in func(obj):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]

    # ----------------------------------------------------------------- mutation detector

    @property
    def detects_mutations(self) -> bool:
        """Whether this store keeps copies to detect in-place mutation."""
        return self._copies is not None

    def _check_copy(self, key: str, obj: Object) -> None:
        if self._copies is None:
            return
        saved = self._copies.get(key)
        if saved is not None and saved != obj:
            log.error("cached object mutated in place", extra={"key": key})

    def verify_no_mutations(self, *, raise_error: bool = True) -> list[str]:
        """Compare every cached object with its copy; return the mutated keys.

        Raises :class:`CacheMutationError` when some were mutated (unless ``raise_error`` is
        false, then it only logs). Returns ``[]`` when the detector is off.
        """
        with self._lock:
            if self._copies is None:
                return []
            mutated = [k for k, obj in self._items.items() if self._copies.get(k) != obj]
        if mutated:
            log.error("cached objects mutated in place", extra={"keys": mutated})
            if raise_error:
                raise CacheMutationError(mutated)
        return mutated

    # ----------------------------------------------------------------- reads

    def get(self, obj: Mapping[str, Any]) -> Object | None:
        """The stored object with ``obj``'s key, or ``None``."""
        return self.get_by_key(self._key_func(obj))

    def get_by_key(self, key: str) -> Object | None:
        """The stored object under ``key``, or ``None``. Example: ``indexer.get_by_key("ns/a")``."""
        with self._lock:
            return self._items.get(key)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._items

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def list(self) -> ObjectList:
        """Every stored object (a new list of the shared dicts), in no particular order."""
        with self._lock:
            return list(self._items.values())

    def list_keys(self) -> StrList:
        """Every key."""
        with self._lock:
            return list(self._items)

    def items(self) -> dict[str, Object]:
        """A consistent snapshot: a new dict key -> shared object."""
        with self._lock:
            return dict(self._items)

    def index_names(self) -> StrList:
        """Names of the indexes (``"namespace"`` included), sorted."""
        with self._lock:
            return sorted(self._index_funcs)

    def _index(self, name: str) -> dict[str, set[str]]:
        try:
            return self._indices[name]
        except KeyError:
            raise KeyError(f"index {name!r} does not exist") from None

    def index(self, name: str, obj: Mapping[str, Any]) -> ObjectList:
        """Objects sharing any of ``obj``'s values in index ``name`` (client-go ``Index``)."""
        with self._lock:
            index = self._index(name)
            keys: set[str] = set()
            for value in self._index_funcs[name](obj):
                keys |= index.get(value, set())
            return [self._items[k] for k in sorted(keys)]

    def by_index(self, name: str, value: str) -> ObjectList:
        """Objects filed under ``value`` in index ``name`` (sorted by key).

        Raises ``KeyError`` for an unknown index. Example: ``indexer.by_index("namespace", "ns")``.
        """
        with self._lock:
            return [self._items[k] for k in sorted(self._index(name).get(value, ()))]

    def index_keys(self, name: str, value: str) -> StrList:
        """Keys filed under ``value`` in index ``name`` (sorted)."""
        with self._lock:
            return sorted(self._index(name).get(value, ()))

    def list_index_func_values(self, name: str) -> StrList:
        """Every value index ``name`` currently holds (sorted)."""
        with self._lock:
            return sorted(self._index(name))

    def __repr__(self) -> str:
        return f"<Indexer objects={len(self)} indexes={self.index_names()}>"
