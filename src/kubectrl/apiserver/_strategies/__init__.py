"""The strategies: what each served resource does on writes, registered once by resource.

:func:`for_resource` gives the generic store
(:class:`~kubectrl.apiserver._registry.store.ObjectStore`) the strategy of a resource: a custom
resource's (:mod:`.custom`, one for every CRD); a built-in kind's (:mod:`.core`, :mod:`.apps`,
:mod:`.batch`, :mod:`.rbac`, :mod:`.networking`, :mod:`.apiextensions`, with the pod defaults
of :mod:`.podspec`); or, for a built-in kind the core reads but does not write, a
:class:`~.base.ReadOnly` one with what is served of it. :func:`builtin_resources` describes
the built-in resources (:mod:`kubectrl._builtin_kinds`) by their strategies.

Nothing outside this package branches on a resource's name
(``tests/unit/apiserver/test_strategies.py`` checks it).
"""

from __future__ import annotations

from kubectrl._builtin_kinds import BUILTIN_KINDS
from kubectrl._builtin_schemas import classes
from kubectrl.apiserver._resources.info import ResourceInfo
from kubectrl.apiserver._strategies import (
    admissionregistration,
    apps,
    batch,
    core,
    networking,
    rbac,
)
from kubectrl.apiserver._strategies.apiextensions import CustomResourceDefinitions
from kubectrl.apiserver._strategies.base import Cause, Key, ReadOnly, Strategy
from kubectrl.apiserver._strategies.custom import CustomResources

__all__ = [
    "NAMESPACES",
    "Cause",
    "Key",
    "Strategy",
    "builtin_resources",
    "for_resource",
    "strategies",
]

#: The strategy of Namespaces (the namespace lifecycle reads them).
NAMESPACES = core.Namespaces()

_WRITTEN: tuple[Strategy, ...] = (
    NAMESPACES,
    core.Pods(),
    core.Services(),
    core.ConfigMaps(),
    core.Secrets(),
    core.ServiceAccounts(),
    core.Events(),
    core.EventsV1(),
    core.Nodes(),
    core.PersistentVolumeClaims(),
    apps.Deployments(),
    apps.ReplicaSets(),
    apps.StatefulSets(),
    apps.DaemonSets(),
    batch.Jobs(),
    batch.CronJobs(),
    networking.Ingresses(),
    networking.Leases(),
    rbac.Roles(),
    rbac.ClusterRoles(),
    rbac.RoleBindings(),
    rbac.ClusterRoleBindings(),
    CustomResourceDefinitions(),
    admissionregistration.ValidatingAdmissionPolicies(),
    admissionregistration.ValidatingAdmissionPolicyBindings(),
    admissionregistration.MutatingAdmissionPolicies(),
    admissionregistration.MutatingAdmissionPolicyBindings(),
)

# Built-in resources served but not written, with what is served of them as kube-apiserver
# v1.36 serves them (a status subresource, scale, generation, short names, field selectors).
_READ: tuple[Strategy, ...] = (
    ReadOnly(("", "endpoints"), short_names=("ep",)),
    ReadOnly(("", "persistentvolumes"), status=True),
    ReadOnly(
        ("", "replicationcontrollers"),
        status=True,
        scale=True,
        generation=True,
        field_labels=frozenset({"status.replicas"}),
    ),
    ReadOnly(("", "resourcequotas"), status=True),
    ReadOnly(("autoscaling", "horizontalpodautoscalers"), status=True, generation=True),
    ReadOnly(("policy", "poddisruptionbudgets"), status=True, generation=True),
    ReadOnly(("networking.k8s.io", "networkpolicies"), generation=True),
    ReadOnly(
        ("certificates.k8s.io", "certificatesigningrequests"),
        status=True,
        field_labels=frozenset({"spec.signerName"}),
    ),
    ReadOnly(("apiregistration.k8s.io", "apiservices"), status=True),
    ReadOnly(("storage.k8s.io", "volumeattachments"), status=True),
    ReadOnly(("flowcontrol.apiserver.k8s.io", "flowschemas"), status=True),
    ReadOnly(("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"), status=True),
)

_BY_RESOURCE: dict[Key, Strategy] = {}
for _strategy in (*_WRITTEN, *_READ):
    if _strategy.resource in _BY_RESOURCE:
        raise RuntimeError(f"two strategies for {_strategy.resource}")
    _BY_RESOURCE[_strategy.resource] = _strategy
_CUSTOM = CustomResources()


def strategies() -> list[Strategy]:
    """Every registered strategy of a built-in resource."""
    return list(_BY_RESOURCE.values())


def for_resource(info: ResourceInfo) -> Strategy:
    """The strategy of a served resource (a custom resource's for every CRD's; a read-only
    one for a built-in kind without its own)."""
    if info.crd:
        return _CUSTOM
    return _BY_RESOURCE.get(info.key) or ReadOnly(info.key)


def builtin_resources(release: str | None = None) -> list[ResourceInfo]:
    """Every built-in resource of :mod:`kubectrl._builtin_kinds` that Kubernetes ``release``
    (``"1.37"``; default the core's default) serves, one entry per group and plural, as its
    strategy serves it.

    What a release serves is read from its schema table (generated from that apiserver's
    OpenAPI document): kube-apiserver 1.35 serves no ``admissionregistration.k8s.io/v1``
    MutatingAdmissionPolicy (GA in 1.36, ``pkg/controlplane/apiserver/options``' default
    resource config), so FakeAPI imitating 1.35 answers 404 for it as the real one does.
    """
    served = classes(release)
    out: dict[Key, ResourceInfo] = {}
    for name, (group, version, kind, plural, namespaced) in BUILTIN_KINDS.items():
        if name not in served:
            continue
        info = out.get((group, plural))
        if info is not None:
            if version not in info.versions:
                info.versions.append(version)
            continue
        strategy = _BY_RESOURCE.get((group, plural)) or ReadOnly((group, plural))
        out[(group, plural)] = ResourceInfo(
            group=group,
            versions=[version],
            plural=plural,
            kind=kind,
            namespaced=namespaced,
            singular=kind.lower(),
            short_names=list(strategy.short_names),
            status=strategy.status,
            scale={} if strategy.scale else None,
            generation=strategy.generation,
            list_kind=f"{kind}List",
            typed=strategy.typed,
            field_labels=strategy.field_labels,
            subresources=strategy.subresources,
        )
    return list(out.values())
