"""Extension API servers in Python: your own API behind kube-apiserver's aggregation layer.

:class:`APIServer` serves the kinds you declare as :class:`~kubectrl.resources.CustomResource`
models over HTTPS, with what kube-apiserver's clients expect of an API: discovery (legacy and
aggregated), OpenAPI v2 and v3 (``kubectl explain``), get / list / watch / create / update /
patch (JSON, merge, server-side apply) / delete / deletecollection with resourceVersions,
bookmarks, 410 after compaction, pagination and selectors, ``Table`` output for ``kubectl get``,
the status subresource, admission rules and custom subresources (streaming ones included).
Objects live in a :class:`Storage`: :class:`MemoryStorage`, or :class:`SQLiteStorage` that
keeps them (and a watch's place) across restarts. :class:`DelegatingAuth` lets kube-apiserver
authenticate and authorize each request, as ``k8s.io/apiserver`` does.

It is the API machinery :class:`~kubectrl.testing.FakeAPI` runs (one core, two products); the
core's modules are private:

- ``_router``: requests (method, path, query, headers, body) to a resource, verb and
  subresource, or to discovery (``_discovery``);
- ``_storage``: the ``Storage`` interface (get, list now or at a revision, create / update
  / delete transactions with resourceVersion preconditions, a change feed with compaction) and
  ``MemoryStorage``; ``_sqlite``: ``SQLiteStorage``;
- ``_watch``: the watch hub (fan-out of the change feed, selectors, bookmarks, 410 after
  compaction);
- ``_store``: the generic store: what a write does (names, system metadata, status
  subresource, finalizers, optimistic concurrency, admission) around the storage, calling the
  resource's strategy in one order; ``_gc``: garbage collection and namespace termination;
  ``_scale``: the scale subresource;
- ``_strategies``: what each resource does on writes (defaults, validation, what a CRD
  defines), one object per resource; ``_validation``: what every object's validation shares
  (``_resources``: the served resources and CRD schemas; ``_registry``: which are served);
- ``_patch`` and ``_apply``: JSON, merge and strategic merge patches, server-side apply and
  managedFields;
- ``_core``: ``APICore``, the composition;
- the server around it: ``_server`` (HTTPS, routing to the core), ``_declare`` (models to
  served resources, admission, custom subresources), ``_auth`` (delegated authentication and
  authorization), ``_openapi`` and ``_table``.

Importing this package imports none of them; each public name loads its module on first use.

Example::

    from kubectrl.apiserver import APIServer, DelegatingAuth, SQLiteStorage
    from kubectrl.client import load_config

    server = APIServer([Flunder, Fischer], storage=SQLiteStorage("/data/wardle.db"),
                       auth=DelegatingAuth(load_config()))
    await server.start(port=8443, cert_file="/certs/tls.crt", key_file="/certs/tls.key")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubectrl._exports import module_getattr as _module_getattr
from kubectrl._exports import publish as _publish

if TYPE_CHECKING:
    from kubectrl.apiserver._auth import DelegatingAuth, UserInfo
    from kubectrl.apiserver._declare import (
        AdmissionError,
        AdmissionRequest,
        SubresourceRequest,
    )
    from kubectrl.apiserver._server import APIServer
    from kubectrl.apiserver._sqlite import SQLiteStorage
    from kubectrl.apiserver._storage import CompactedError, MemoryStorage, Storage

__all__ = [
    "APIServer",
    "AdmissionError",
    "AdmissionRequest",
    "CompactedError",
    "DelegatingAuth",
    "KeyExistsError",
    "MemoryStorage",
    "RevisionMismatchError",
    "SQLiteStorage",
    "Storage",
    "StorageError",
    "SubresourceRequest",
    "UserInfo",
]

_lazy_getattr, __dir__ = _module_getattr(
    __name__,
    globals(),
    lazy={
        "APIServer": "kubectrl.apiserver._server",
        "AdmissionError": "kubectrl.apiserver._declare",
        "AdmissionRequest": "kubectrl.apiserver._declare",
        "CompactedError": "kubectrl.apiserver._storage",
        "DelegatingAuth": "kubectrl.apiserver._auth",
        "KeyExistsError": "kubectrl.apiserver._storage",
        "MemoryStorage": "kubectrl.apiserver._storage",
        "RevisionMismatchError": "kubectrl.apiserver._storage",
        "SQLiteStorage": "kubectrl.apiserver._sqlite",
        "Storage": "kubectrl.apiserver._storage",
        "StorageError": "kubectrl.apiserver._storage",
        "SubresourceRequest": "kubectrl.apiserver._declare",
        "UserInfo": "kubectrl.apiserver._auth",
    },
)


def __getattr__(name: str) -> Any:
    value = _lazy_getattr(name)
    _publish(__name__, {name: value}, [name])  # reported as kubectrl.apiserver.<name>
    return value
