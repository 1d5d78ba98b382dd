"""The API core: the kube-apiserver behaviour kubectrl serves, independent of any HTTP server.

:class:`~kubectrl.testing.FakeAPI` serves it in memory through an httpx transport; a later
extension API server will serve the same code over HTTPS. It is internal and exports nothing:
its one user is :mod:`kubectrl.testing`, which composes its private modules (an import-linter
contract keeps every other package out). Its parts, one job each:

- ``_router``: requests (method, path, query, headers, body) to a resource, verb and
  subresource, or to discovery (``_discovery``);
- ``_storage``: the ``Storage`` interface (get, list now or at a revision, create / update
  / delete transactions with resourceVersion preconditions, a change feed with compaction) and
  ``MemoryStorage``;
- ``_watch``: the watch hub (fan-out of the change feed, selectors, bookmarks, 410 after
  compaction);
- ``_store``: what a write does (names, system metadata, status subresource, finalizers,
  optimistic concurrency) around the storage; ``_gc``: garbage collection and namespace
  termination; ``_crds``: CRD registration; ``_scale``: the scale subresource;
- ``_patch`` and ``_apply``: JSON, merge and strategic merge patches, server-side apply and
  managedFields; ``_validation`` and ``_defaults``: validation and defaulting (``_resources``:
  the served resources and CRD schemas; ``_registry``: which are served);
- ``_core``: ``APICore``, the composition.
"""

from __future__ import annotations

__all__: list[str] = []
