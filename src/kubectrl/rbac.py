"""RBAC rules declared next to the code that needs them, generated into a ClusterRole.

A controller says which API access it needs where it uses it, the way kubebuilder's
``+kubebuilder:rbac`` markers do: stack :func:`rule` decorators on the reconciler class (or a
reconcile function). :func:`cluster_role` collects them from any number of sources and returns
the ClusterRole as controller-gen (``controller-tools/pkg/rbac/parser.go``) writes it: one rule
per resource, then rules with the same target merged (verbs united), rules with the same verbs
merged across resources and then across groups, every list de-duplicated and sorted, the rules
sorted. ``python -m kubectrl rbac module:Reconciler ... --name NAME`` prints it as YAML.

A kind can be named by a model class (a :class:`~kubectrl.resources.CustomResource` subclass or
a ``kubernetes.client.models`` class) or an ``(apiVersion, kind)`` tuple of a built-in kind; it
becomes its group and plural. Or name ``groups`` and ``resources`` directly (``""`` or ``"core"``
is the core group). Rules with a ``namespace`` go into a Role of that namespace instead
(:func:`roles`).

Example::

    >>> @rule(("apps/v1", "Deployment"), verbs=["get", "list", "watch", "create", "update"])
    ... @rule(("apps/v1", "Deployment"), subresources=["status"], verbs=["get"])
    ... @rule(groups=["core"], resources=["events"], verbs=["create", "patch"])
    ... class DeploymentReconciler:
    ...     pass
    >>> role = cluster_role("my-controller", DeploymentReconciler)
    >>> for r in role["rules"]:
    ...     print(r["apiGroups"], r["resources"], r["verbs"])
    [''] ['events'] ['create', 'patch']
    ['apps'] ['deployments'] ['create', 'get', 'list', 'update', 'watch']
    ['apps'] ['deployments/status'] ['get']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

__all__ = [
    "EVENT_RULES",
    "METRICS_AUTH_RULES",
    "PolicyRule",
    "cluster_role",
    "leader_election_rules",
    "normalize",
    "roles",
    "rule",
    "rules_of",
    "to_yaml",
]

_T = TypeVar("_T")

#: Where :func:`rule` keeps a class's (or function's) own declarations.
_ATTRIBUTE = "__kubectrl_rbac__"


@dataclasses.dataclass(frozen=True)
class PolicyRule:
    """One RBAC rule (``rbac.authorization.k8s.io/v1`` ``PolicyRule``), plus its namespace.

    ``namespace`` ``""`` means the ClusterRole; any other value a Role in that namespace.

    Example::

        >>> PolicyRule(verbs=("get",), groups=("apps",), resources=("deployments",)).to_dict()
        {'apiGroups': ['apps'], 'resources': ['deployments'], 'verbs': ['get']}
        >>> PolicyRule(verbs=("get",), urls=("/metrics",)).to_dict()
        {'nonResourceURLs': ['/metrics'], 'verbs': ['get']}
    """

    verbs: tuple[str, ...]
    groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()
    namespace: str = ""

    def __post_init__(self) -> None:
        if not self.verbs:
            raise ValueError(f"RBAC rule {self._target()}: no verbs")
        if not self.resources and not self.urls:
            raise ValueError(f"RBAC rule {self._target()}: names neither resources nor urls")
        if self.resources and not self.groups:
            raise ValueError(
                f"RBAC rule {self._target()}: resources need their API groups "
                '("" or "core" for the core group)'
            )
        if self.urls and self.resources:
            raise ValueError(
                f"RBAC rule {self._target()}: a rule names resources or non-resource urls, not both"
            )
        if self.urls and self.namespace:
            raise ValueError(
                f"RBAC rule {self._target()}: non-resource urls exist only in a ClusterRole, "
                f"not in namespace {self.namespace!r}"
            )

    def _target(self) -> str:
        what = ",".join(self.resources) or ",".join(self.urls) or "?"
        return f"(groups={list(self.groups)}, resources/urls={what})"

    def to_dict(self) -> dict[str, list[str]]:
        """The rule as the API writes it: keys in alphabetical order, empty lists left out."""
        fields = (
            ("apiGroups", self.groups if self.resources else ()),
            ("nonResourceURLs", self.urls),
            ("resourceNames", self.resource_names),
            ("resources", self.resources),
            ("verbs", self.verbs),
        )
        return {key: list(value) for key, value in fields if value}


#: What an :class:`~kubectrl.events.EventRecorder` writes: ``events`` of ``events.k8s.io``
#: (``manager.event_recorder``'s default) and of the core group (``api="v1"``), created and
#: patched (a repeated event is patched: its series, or its count), as controller-runtime's
#: scaffolds grant (``+kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch``).
EVENT_RULES: tuple[PolicyRule, ...] = (
    PolicyRule(verbs=("create", "patch"), groups=("events.k8s.io",), resources=("events",)),
    PolicyRule(verbs=("create", "patch"), groups=("",), resources=("events",)),
)

#: What ``ManagerOptions(metrics_secure=True)`` needs: TokenReviews and SubjectAccessReviews to
#: authenticate and authorize whoever scrapes ``/metrics``.
METRICS_AUTH_RULES: tuple[PolicyRule, ...] = (
    PolicyRule(verbs=("create",), groups=("authentication.k8s.io",), resources=("tokenreviews",)),
    PolicyRule(
        verbs=("create",), groups=("authorization.k8s.io",), resources=("subjectaccessreviews",)
    ),
)


def leader_election_rules(namespace: str) -> tuple[PolicyRule, ...]:
    """What leader election (:class:`~kubectrl.leaderelection.LeaseLock`) needs, in a Role.

    Leases are read, created and updated in the Lease's namespace only.

    Example::

        >>> (lease,) = leader_election_rules("my-system")
        >>> lease.namespace, lease.resources, lease.verbs
        ('my-system', ('leases',), ('create', 'get', 'update'))
    """
    if not namespace:
        raise ValueError("leader_election_rules: the Lease's namespace is required")
    return (
        PolicyRule(
            verbs=("create", "get", "update"),
            groups=("coordination.k8s.io",),
            resources=("leases",),
            namespace=namespace,
        ),
    )


def _group_and_plural(kind: Any) -> tuple[str, str]:
    from kubectrl import _builtin_kinds

    if isinstance(kind, tuple):
        if len(kind) != 2 or not all(isinstance(part, str) for part in kind):
            raise TypeError(f"RBAC kind {kind!r}: expected an (apiVersion, kind) tuple")
        api_version, kind_name = kind
        group = api_version.rpartition("/")[0]
        for row in _builtin_kinds.BUILTIN_KINDS.values():
            if row[0] == group and row[2] == kind_name:
                return group, row[3]
        raise ValueError(
            f"RBAC kind {kind!r}: not a built-in kind; name a CustomResource model class, or "
            "give groups= and resources= instead"
        )
    from kubectrl import kinds

    try:
        info = kinds.kind_info(kind)
    except TypeError as exc:
        raise TypeError(f"RBAC kind: {exc}") from None
    if not info.plural:
        raise ValueError(f"RBAC kind {info.api_version} {info.kind}: its plural is not known")
    return info.group, info.plural


def _strings(name: str, values: Iterable[str] | str) -> tuple[str, ...]:
    if isinstance(values, str):
        raise TypeError(f"RBAC rule {name}={values!r}: expected a list of strings, not a string")
    result = tuple(values)
    for value in result:
        if not isinstance(value, str):
            raise TypeError(f"RBAC rule {name}: {value!r} is not a string")
    return result


def rule(
    *kinds: Any,
    verbs: Sequence[str],
    groups: Sequence[str] = (),
    resources: Sequence[str] = (),
    subresources: Sequence[str] = (),
    resource_names: Sequence[str] = (),
    urls: Sequence[str] = (),
    namespace: str = "",
) -> Callable[[_T], _T]:
    """Declare an RBAC rule on a class or function (a decorator; stack as many as needed).

    ``kinds`` (model classes or ``(apiVersion, kind)`` tuples) add their group and plural;
    ``groups`` and ``resources`` are taken as written. ``subresources`` (``["status"]``) turns
    every resource into ``<resource>/<subresource>``. A subclass inherits its bases' rules.

    Example::

        >>> @rule(groups=["apps"], resources=["deployments"], verbs=["get", "list", "watch"])
        ... def reconcile(request): ...
        >>> rules_of(reconcile)[0].to_dict()
        {'apiGroups': ['apps'], 'resources': ['deployments'], 'verbs': ['get', 'list', 'watch']}
    """
    declared: list[PolicyRule] = []
    verb_tuple = _strings("verbs", verbs)
    names = _strings("resource_names", resource_names)
    subs = _strings("subresources", subresources)

    def expand(plurals: Sequence[str]) -> tuple[str, ...]:
        if not subs:
            return tuple(plurals)
        return tuple(f"{plural}/{sub}" for plural in plurals for sub in subs)

    for kind in kinds:
        group, plural = _group_and_plural(kind)
        declared.append(
            PolicyRule(
                verbs=verb_tuple,
                groups=(group,),
                resources=expand([plural]),
                resource_names=names,
                namespace=namespace,
            )
        )
    if resources or urls or not kinds:
        declared.append(
            PolicyRule(
                verbs=verb_tuple,
                groups=_strings("groups", groups),
                resources=expand(_strings("resources", resources)),
                resource_names=names,
                urls=_strings("urls", urls),
                namespace=namespace,
            )
        )
    elif groups:
        raise TypeError("RBAC rule: groups= without resources= (kinds bring their own group)")

    def decorate(target: _T) -> _T:
        own = target.__dict__.get(_ATTRIBUTE, ()) if hasattr(target, "__dict__") else ()
        # Decorators apply bottom-up; keep the rules in the order they are written.
        setattr(target, _ATTRIBUTE, (*declared, *own))
        return target

    return decorate


def rules_of(*sources: Any) -> list[PolicyRule]:
    """Every rule the sources declare, in order.

    A source is a class or function decorated with :func:`rule` (a class also brings its bases'
    rules), a :class:`PolicyRule`, or an iterable of those. A source that declares nothing is an
    error naming it: a typo must not silently drop permissions.

    Example::

        >>> len(rules_of(EVENT_RULES, METRICS_AUTH_RULES))
        4
        >>> rules_of(int)
        Traceback (most recent call last):
        ...
        ValueError: <class 'int'> declares no RBAC rules (decorate it with kubectrl.rbac.rule)
    """
    result: list[PolicyRule] = []
    for source in sources:
        if isinstance(source, PolicyRule):
            result.append(source)
            continue
        if isinstance(source, (list, tuple)):
            result.extend(rules_of(*source))
            continue
        found: list[PolicyRule] = []
        seen: set[int] = set()
        owners = source.__mro__ if isinstance(source, type) else (source,)
        for owner in owners:
            own = getattr(owner, "__dict__", {}).get(_ATTRIBUTE, ())
            for item in own:
                if id(item) not in seen:
                    seen.add(id(item))
                    found.append(item)
        if not found:
            raise ValueError(
                f"{source!r} declares no RBAC rules (decorate it with kubectrl.rbac.rule)"
            )
        result.extend(found)
    return result


def _sorted_set(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(values)))


def _key(r: PolicyRule) -> tuple[tuple[str, ...], ...]:
    return (r.groups, r.resources, r.resource_names, r.urls)


def _merge(
    rules: Iterable[PolicyRule],
    key: Callable[[PolicyRule], Any],
    field: str,
) -> list[PolicyRule]:
    """Merge the rules that agree on ``key``, uniting ``field``."""
    merged: dict[Any, PolicyRule] = {}
    for item in rules:
        k = key(item)
        first = merged.get(k)
        if first is None:
            merged[k] = item
        else:
            united = _sorted_set((*getattr(first, field), *getattr(item, field)))
            changes: dict[str, Any] = {field: united}
            merged[k] = dataclasses.replace(first, **changes)
    return list(merged.values())


def normalize(rules: Iterable[PolicyRule]) -> list[dict[str, list[str]]]:
    """Merge and sort rules as controller-gen's ``NormalizeRules`` does; the API dicts.

    One rule per resource first; then the rules with the same groups, resources, resource names
    and urls are merged (verbs united), then those with the same verbs across resources, across
    groups and across urls; each list is de-duplicated and sorted, ``"core"`` is written ``""``,
    a rule holding ``"*"`` keeps only ``"*"``, and the rules are sorted by groups, resources,
    resource names and urls. Namespaces are ignored here (see :func:`roles`).

    Example::

        >>> normalize([
        ...     PolicyRule(verbs=("watch", "get"), groups=("apps",), resources=("deployments",)),
        ...     PolicyRule(verbs=("get", "watch"), groups=("apps",), resources=("replicasets",)),
        ...     PolicyRule(verbs=("list",), groups=("apps",), resources=("deployments",)),
        ... ])  # doctest: +NORMALIZE_WHITESPACE
        [{'apiGroups': ['apps'], 'resources': ['deployments'], 'verbs': ['get', 'list', 'watch']},
         {'apiGroups': ['apps'], 'resources': ['replicasets'], 'verbs': ['get', 'watch']}]
    """
    split: list[PolicyRule] = []
    for item in rules:
        fixed = dataclasses.replace(
            item,
            groups=_sorted_set("" if g == "core" else g for g in item.groups),
            resource_names=_sorted_set(item.resource_names),
            urls=_sorted_set(item.urls),
            verbs=_sorted_set(item.verbs),
            namespace="",
        )
        if fixed.resources:
            split.extend(dataclasses.replace(fixed, resources=(r,)) for r in fixed.resources)
        else:
            split.append(fixed)
    merged = _merge(split, _key, "verbs")
    merged = _merge(merged, lambda r: (r.groups, r.resource_names, r.urls, r.verbs), "resources")
    merged = _merge(merged, lambda r: (r.resources, r.resource_names, r.urls, r.verbs), "groups")
    merged = _merge(merged, lambda r: (r.groups, r.resources, r.resource_names, r.verbs), "urls")
    # controller-gen sorts by the key's string "groups + resources + names + urls" ('&'-joined).
    merged.sort(key=lambda r: " + ".join("&".join(part) for part in _key(r)))
    result = []
    for item in merged:
        if "*" in item.verbs:
            item = dataclasses.replace(item, verbs=("*",))
        result.append(item.to_dict())
    return result


def cluster_role(name: str, *sources: Any) -> dict[str, Any]:
    """The ClusterRole ``name`` granting every cluster-wide rule the sources declare.

    Rules declared with a namespace are left out (they belong in :func:`roles`).

    Example::

        >>> role = cluster_role("metrics-auth", METRICS_AUTH_RULES)
        >>> role["kind"], [r["resources"] for r in role["rules"]]
        ('ClusterRole', [['tokenreviews'], ['subjectaccessreviews']])
    """
    if not name:
        raise ValueError("cluster_role: a name is required")
    declared = [r for r in rules_of(*sources) if not r.namespace]
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": normalize(declared),
    }


def roles(name: str, *sources: Any) -> list[dict[str, Any]]:
    """The ClusterRole and the namespaced Roles, all named ``name``, as controller-gen makes them.

    The ClusterRole (cluster-wide rules) comes first, then one Role per namespace, sorted by
    namespace; a role without rules is left out.

    Example::

        >>> [(o["kind"], o["metadata"]) for o in roles("ctl", EVENT_RULES,
        ...                                           leader_election_rules("ctl-system"))]
        [('ClusterRole', {'name': 'ctl'}), ('Role', {'name': 'ctl', 'namespace': 'ctl-system'})]
    """
    declared = rules_of(*sources)
    objects: list[dict[str, Any]] = []
    if any(not r.namespace for r in declared):
        objects.append(cluster_role(name, declared))
    for namespace in sorted({r.namespace for r in declared if r.namespace}):
        objects.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": {"name": name, "namespace": namespace},
                "rules": normalize(r for r in declared if r.namespace == namespace),
            }
        )
    return objects


def to_yaml(objects: Iterable[dict[str, Any]]) -> str:
    """The objects as one YAML stream (``---`` between documents), keys in their order.

    Example::

        >>> print(to_yaml([cluster_role("x", EVENT_RULES)]), end="")
        apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRole
        metadata:
          name: x
        rules:
        - apiGroups:
          - ''
          - events.k8s.io
          resources:
          - events
          verbs:
          - create
          - patch
    """
    import yaml

    return "---\n".join(
        yaml.safe_dump(obj, sort_keys=False, default_flow_style=False, width=100) for obj in objects
    )
