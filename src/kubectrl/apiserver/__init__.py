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

It is the API machinery :class:`~kubectrl.testing.FakeAPI` runs (one core, two products):
:mod:`kubectrl.apiserver.inprocess` serves the core without a socket, which is how FakeAPI uses
it. The rest of the core is private; its modules, by subpackage, from the server down to what
everything uses (each imports only from the subpackages below it; ``pyproject.toml``'s
import-linter contract keeps it so):

- ``inprocess`` (public): the core's request and answer types and its two steps, ``route`` and
  ``serve``, for a transport of one's own.
- ``_server``: the extension API server around the core.

  - ``_server.server``: ``APIServer``, the core over HTTPS with aiohttp (limits, health,
    aggregated discovery, OpenAPI and ``Table`` answers, custom subresources);
  - ``_server.declare``: models to served resources, admission rules (a validating admission
    plugin: ``AdmissionAttributes``, ``AdmissionError``) and custom subresources;
  - ``_server.auth``: delegated authentication and authorization (``DelegatingAuth``);
  - ``_server.tls``: the self-signed serving certificate;
  - ``_server.openapi``: OpenAPI v2 and v3 documents of the served kinds;
  - ``_server.table``: ``Table`` output from printer columns.

- ``_endpoints``: requests served.

  - ``_endpoints.core``: ``APICore``: a routed request's verb (get, list, watch, create,
    update, patch, apply, delete, deletecollection) over the store, under one lock;
  - ``_endpoints.watch``: the watch hub (the change feed fanned out through selectors,
    bookmarks, 410 after compaction) and ``WatchStream``;
  - ``_endpoints.selection``: namespace, label and field selectors of a list or watch;
  - ``_endpoints.scale``: the ``scale`` subresource.

- ``_registry``: the generic store.

  - ``_registry.store``: ``ObjectStore``: what a write does around the storage, calling the
    resource's strategy and admission in one order (its docstring gives it, as
    ``store.go``'s);
  - ``_registry.gc``: garbage collection and namespace termination.

- ``_admission``: admission as the store runs it.

  - ``_admission.admission``: a write's ``Attributes``; ``Admission``: the namespace
    lifecycle, then the validating plugins, on the object as it will be stored;
  - ``_admission.lifecycle``: the NamespaceLifecycle plugin (stored namespaces, or a server's);
  - ``_admission.policy``: the ValidatingAdmissionPolicy plugin (the stored policies, bindings
    and params), and ``check_policy_expression``;
  - ``_admission.policy_mutating``: the MutatingAdmissionPolicy plugin (ApplyConfiguration,
    JSONPatch, reinvocation).

- ``_strategies``: what each resource does on writes, one object per resource, registered in
  the package (``for_resource``, ``builtin_resources``).

  - ``_strategies.base``: ``Strategy``, its hooks and facts; ``ReadOnly``;
  - ``_strategies.core``: Namespaces, Pods, Services, ConfigMaps, Secrets, ServiceAccounts,
    Events, Nodes, PersistentVolumeClaims;
  - ``_strategies.apps``: Deployments, ReplicaSets, StatefulSets, DaemonSets;
  - ``_strategies.admissionregistration``: Validating and MutatingAdmissionPolicies and their
    bindings;
  - ``_strategies.batch``: Jobs, CronJobs;
  - ``_strategies.rbac``: Roles, ClusterRoles and their bindings;
  - ``_strategies.networking``: Ingresses and Leases;
  - ``_strategies.apiextensions``: CustomResourceDefinitions (the resource each defines);
  - ``_strategies.custom``: custom resources (their CRD's schema);
  - ``_strategies.podspec``: the defaults of a pod spec, the QoS class.

- ``_validation``: validation.

  - ``_validation.objects``: what every object's validation shares (labels, metadata passes,
    names, selectors) and the helpers of the strategies;
  - ``_validation.metadata``: ``metadata`` as ``ValidateObjectMeta`` checks it;
  - ``_validation.kinds``: the built-in kinds' field checks;
  - ``_validation.crds``: the CRDs the apiserver refuses.

- ``_patch``: JSON, merge and strategic merge patches (``_patch.patches``) and server-side
  apply with ``managedFields`` (``_patch.apply``).

- ``_schema``: schemas.

  - ``_schema.structural``: a custom resource pruned, defaulted and validated by its
    structural schema, as apiextensions-apiserver does;
  - ``_schema.defaults``: its nulls and defaults settled (on writes and on reads);
  - ``_schema.served``: an object rendered at a version and stored at the storage version
    (what a CRD version's storage codec does: conversion, coercion, read defaulting);
  - ``_schema.cel``, ``_schema.re2``, ``_schema.formats``, ``_schema.values``: its CEL rules,
    RE2 patterns, formats and the values its causes show;
  - ``_schema.gotypes``: built-in objects decoded and encoded as their Go types;
  - ``_schema.cel_policy``: admission policies' CEL expressions compiled as the apiserver
    refuses them (syntax, result types);
  - ``_schema.quantity``: resource quantities;
  - ``_schema.field_validation``: ``fieldValidation``: the fields a kind does not declare.

- ``_router``: a request (method, path, query, headers, body) to a resource, version,
  namespace, name, subresource and verb, or to discovery; ``Request``, ``Reply``, ``Route``.

- ``_storage``: the ``Storage`` interface (get, list now or at a revision, create / update /
  delete transactions with resourceVersion preconditions, a change feed with compaction),
  ``MemoryStorage`` and the compactor (``_storage.memory``); ``SQLiteStorage``
  (``_storage.sqlite``).

- ``_resources``: what is served.

  - ``_resources.info``: ``ResourceInfo``, the resource a CRD defines;
  - ``_resources.registry``: which resources are served;
  - ``_resources.versions``: the Kubernetes release a core imitates (``APICore(version=...)``),
    which the behaviours that changed between releases ask for;
  - ``_resources.discovery``: the discovery documents;
  - ``_resources.objects``: key order, keys, limits, JSON and YAML decoding.

- ``_status``: ``Status`` errors and bodies.

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

from kubectrl._internal.exports import Deprecated as _Deprecated
from kubectrl._internal.exports import module_getattr as _module_getattr
from kubectrl._internal.exports import publish as _publish

if TYPE_CHECKING:
    from kubectrl.apiserver._resources.discovery import KUBERNETES_VERSION, KUBERNETES_VERSIONS
    from kubectrl.apiserver._server.auth import DelegatingAuth, UserInfo
    from kubectrl.apiserver._server.declare import (
        AdmissionAttributes,
        AdmissionError,
        SubresourceRequest,
    )
    from kubectrl.apiserver._server.server import APIServer
    from kubectrl.apiserver._storage.memory import CompactedError, MemoryStorage, Storage
    from kubectrl.apiserver._storage.sqlite import SQLiteStorage

__all__ = [
    "KUBERNETES_VERSION",
    "KUBERNETES_VERSIONS",
    "APIServer",
    "AdmissionAttributes",
    "AdmissionError",
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
    "check_policy_expression",
]

_lazy_getattr, __dir__ = _module_getattr(
    __name__,
    globals(),
    lazy={
        "APIServer": "kubectrl.apiserver._server.server",
        "AdmissionError": "kubectrl.apiserver._server.declare",
        "AdmissionAttributes": "kubectrl.apiserver._server.declare",
        "CompactedError": "kubectrl.apiserver._storage.memory",
        "DelegatingAuth": "kubectrl.apiserver._server.auth",
        "KUBERNETES_VERSION": "kubectrl.apiserver._resources.discovery",
        "KUBERNETES_VERSIONS": "kubectrl.apiserver._resources.discovery",
        "KeyExistsError": "kubectrl.apiserver._storage.memory",
        "MemoryStorage": "kubectrl.apiserver._storage.memory",
        "RevisionMismatchError": "kubectrl.apiserver._storage.memory",
        "SQLiteStorage": "kubectrl.apiserver._storage.sqlite",
        "Storage": "kubectrl.apiserver._storage.memory",
        "StorageError": "kubectrl.apiserver._storage.memory",
        "SubresourceRequest": "kubectrl.apiserver._server.declare",
        "UserInfo": "kubectrl.apiserver._server.auth",
        "check_policy_expression": "kubectrl.apiserver._admission.policy",
    },
    # The webhook's AdmissionRequest is an AdmissionReview's request; an admission rule here
    # receives k8s.io/apiserver's admission.Attributes, so it is named after those.
    deprecated={
        "AdmissionRequest": _Deprecated(
            "kubectrl.apiserver._server.declare",
            "AdmissionAttributes",
            "kubectrl.apiserver.AdmissionAttributes",
        ),
    },
)


def __getattr__(name: str) -> Any:
    value = _lazy_getattr(name)
    _publish(__name__, {name: value}, [name])  # reported as kubectrl.apiserver.<name>
    return value
