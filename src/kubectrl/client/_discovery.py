"""Where a request goes: discovery and the RESTMapper, and the one checked builder of paths.

The RESTMapper resolves ``apiVersion`` + ``kind`` (or a GVR) to an :class:`APIResource`: its
URL and its scope. Only the group-version actually asked about is fetched (``/api/v1`` or
``/apis/<group>/<version>``), not the whole discovery tree, and the answer is cached. A miss (an
unknown kind, or a group-version the server did not serve yet) fetches that group-version again
once before failing, so a CRD installed after the client started is found on first use, like
client-go's ``DeferredDiscoveryRESTMapper`` reset on ``NoKindMatchError``. Concurrent misses for
one group-version share one request.

Every verb, REST and WebSocket, gets its URL path here (:meth:`APIResource.path`,
:func:`resource_path`, :func:`namespaced_path`, :func:`pod_path`). A name, a namespace, a
subresource (and the resource, group and version) each become exactly one URL path segment, or
the request is refused with :class:`~kubectrl.errors.InvalidPathSegmentError` before anything is
sent:

* a name of a single-object verb may not be empty (the path would name the whole collection: a
  ``delete`` would delete every object, a ``get`` would answer the list);
* no segment may be ``"."`` or ``".."``, nor contain ``"/"`` or ``"%"``: the apiserver's
  ``IsValidPathSegmentName`` (apimachinery ``pkg/api/validation/path/name.go``), which
  client-go's request builder (``rest/request.go``: ``Name``, ``Namespace``, ``SubResource``,
  ``Resource``) applies before sending. httpx removes dot segments and the server decodes
  ``%2F``/``%2e``, so any of these would move the request to another object, namespace or
  resource;
* every other character that is not a plain path character (``?``, ``#``, a space, a
  non-ASCII letter...) is percent-encoded, as client-go's URL does, so it stays inside its
  segment: the server decodes it back into the same name (a ``?`` in a name cannot cut the path
  into a query, a ``#`` cannot drop the query with its ``dryRun``).

Example::

    >>> resource_path(group="apps", version="v1", resource="deployments", namespace="ns",
    ...               name="web", subresource="scale", verb="patch")
    '/apis/apps/v1/namespaces/ns/deployments/web/scale'
    >>> resource_path(group="", version="v1", resource="configmaps", namespace="ns",
    ...               name="a?b#c", verb="get")
    '/api/v1/namespaces/ns/configmaps/a%3Fb%23c'
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from kubectrl._internal.checks import (
    COLLECTION,
    check_request,
    check_segment,
    describe,
    segment_problems,
)
from kubectrl.errors import InvalidPathSegmentError, NotFoundError, ResourceNotFoundError
from kubectrl.objects import GroupVersionKind, GroupVersionResource, join_api_version

__all__ = [
    "COLLECTION",
    "APIResource",
    "RESTMapper",
    "check_container",
    "check_proxy_path",
    "check_request",
    "check_segment",
    "describe",
    "discovery_path",
    "namespaced_path",
    "parse_resource_list",
    "pod_path",
    "resource_path",
    "segment_problems",
]


def _prefix(group: str, version: str, verb: str, resource: str) -> str:
    v = check_segment(version, argument="version", verb=verb, resource=resource)
    if not group:
        return f"/api/{v}"
    g = check_segment(group, argument="group", verb=verb, resource=resource)
    return f"/apis/{g}/{v}"


def discovery_path(group: str, version: str) -> str:
    """The discovery path of a group-version (``/api/v1``, ``/apis/apps/v1``), checked.

    Example::

        >>> discovery_path("apps", "v1")
        '/apis/apps/v1'
    """
    what = f"{group}/{version}" if group else version
    return _prefix(group, version, "discover", what)


def resource_path(
    *,
    group: str,
    version: str,
    resource: str,
    namespace: str | None = None,
    name: str | None = None,
    subresource: str = "",
    verb: str = "",
    label: str = "",
) -> str:
    """The checked URL path of a resource: its collection (``name=None``), in ``namespace`` when
    one is given, or one object (``name``, never empty) and its ``subresource``.

    ``label`` is how messages name the resource (default: ``resource``).
    """
    label = label or resource
    base = _prefix(group, version, verb, label)
    if namespace:
        ns = check_segment(namespace, argument="namespace", verb=verb, resource=label)
        base += f"/namespaces/{ns}"
    base += "/" + check_segment(resource, argument="resource", verb=verb, resource=label)
    if name is None:
        if subresource:
            raise InvalidPathSegmentError(
                "name",
                name,
                [f"a subresource ({subresource!r}) is of one object: pass its name"],
                verb=verb,
                resource=label,
            )
        return base
    base += "/" + check_segment(name, argument="name", verb=verb, resource=label)
    if subresource:
        base += "/" + check_segment(subresource, argument="subresource", verb=verb, resource=label)
    return base


def namespaced_path(
    resource: str, namespace: str, name: str, subresource: str = "", *, verb: str
) -> str:
    """The checked path of one object of a core (``v1``) namespaced ``resource`` and its
    ``subresource``; the namespace is required (without one the path would be the
    cluster-wide ``/api/v1/<resource>/...``).

    Example::

        >>> namespaced_path("serviceaccounts", "ci", "builder", "token", verb="create")
        '/api/v1/namespaces/ci/serviceaccounts/builder/token'
    """
    label = f"{resource}/{subresource}" if subresource else resource
    if namespace == "" or namespace is None:
        raise InvalidPathSegmentError(
            "namespace", namespace, ["may not be empty"], verb=verb, resource=label
        )
    return resource_path(
        group="",
        version="v1",
        resource=resource,
        namespace=namespace,
        name=name,
        subresource=subresource,
        verb=verb,
        label=label,
    )


def pod_path(namespace: str, name: str, subresource: str, *, verb: str) -> str:
    """The checked path of a pod's subresource (``log``, ``exec``, ``eviction``...).

    Example::

        >>> pod_path("ns", "web-0", "exec", verb="exec")
        '/api/v1/namespaces/ns/pods/web-0/exec'
    """
    return namespaced_path("pods", namespace, name, subresource, verb=verb)


def check_container(container: str | None, *, verb: str, resource: str) -> str | None:
    """A container name (sent as a query parameter) checked like a name; ``None`` or ``""``
    mean the server's default container.

    Example::

        >>> check_container("app", verb="exec", resource="pods/exec")
        'app'
    """
    if container is None or container == "":
        return None
    check_segment(container, argument="container", verb=verb, resource=resource)
    return container


def check_proxy_path(path: str, *, verb: str, resource: str) -> str:
    """The path relayed by a ``proxy`` subresource, checked: its ``/`` are its own, but a
    ``"."`` or ``".."`` segment would be removed by the URL parser and climb out of the proxy
    (``pods/web/proxy/../../../secrets/x`` is ``secrets/x``), so it is refused.

    Example::

        >>> check_proxy_path("/api/v1/query", verb="get", resource="services/proxy")
        '/api/v1/query'
    """
    if not isinstance(path, str):
        raise InvalidPathSegmentError(
            "path",
            path,
            [f"must be a string, not {type(path).__name__}"],
            verb=verb,
            resource=resource,
        )
    dots = sorted({part for part in path.split("/") if part in (".", "..")})
    if dots:
        raise InvalidPathSegmentError(
            "path",
            path,
            [f"may not have a {part!r} segment" for part in dots],
            verb=verb,
            resource=resource,
        )
    return path


@dataclasses.dataclass(frozen=True)
class APIResource:
    """One resource as discovery describes it, and how to build its URLs.

    ``name`` is the plural (``deployments``); ``subresources`` the names served under it
    (``status``, ``scale``, ``log``...).

    Example::

        >>> r = APIResource(group="apps", version="v1", name="deployments", kind="Deployment",
        ...                 namespaced=True)
        >>> r.path(namespace="ns", name="web", subresource="scale")
        '/apis/apps/v1/namespaces/ns/deployments/web/scale'
    """

    group: str
    version: str
    name: str
    kind: str
    namespaced: bool
    verbs: frozenset[str] = frozenset()
    subresources: frozenset[str] = frozenset()
    short_names: tuple[str, ...] = ()
    singular_name: str = ""

    @property
    def api_version(self) -> str:
        """``group/version`` (``v1`` for the core group)."""
        return join_api_version(self.group, self.version)

    @property
    def gvk(self) -> GroupVersionKind:
        """The :class:`~kubectrl.objects.GroupVersionKind`."""
        return GroupVersionKind(self.group, self.version, self.kind)

    @property
    def gvr(self) -> GroupVersionResource:
        """The :class:`~kubectrl.objects.GroupVersionResource`."""
        return GroupVersionResource(self.group, self.version, self.name)

    @property
    def label(self) -> str:
        """How error messages name it: ``deployments.apps`` or ``configmaps``."""
        return f"{self.name}.{self.group}" if self.group else self.name

    def path(
        self,
        *,
        namespace: str | None = None,
        name: str | None = None,
        subresource: str = "",
        verb: str = "",
    ) -> str:
        """The checked URL path: the collection (``name=None``; ``namespace=None`` on a
        namespaced resource means all namespaces) or one object and its ``subresource``.

        Each of ``namespace``, ``name`` and ``subresource`` must be one path segment: an empty
        ``name``, ``"."``, ``".."``, a ``"/"`` or a ``"%"`` raise
        :class:`~kubectrl.errors.InvalidPathSegmentError` naming ``verb`` (nothing is sent);
        other characters are percent-encoded (see the module docstring).
        """
        return resource_path(
            group=self.group,
            version=self.version,
            resource=self.name,
            namespace=namespace if self.namespaced else None,
            name=name,
            subresource=subresource,
            verb=verb,
            label=self.label,
        )

    def object_path(
        self, name: str, *, namespace: str | None = None, subresource: str = "", verb: str = ""
    ) -> str:
        """:meth:`path` of one object: ``name`` is required (``None`` or ``""`` raise
        :class:`~kubectrl.errors.InvalidPathSegmentError`, never the collection's path).

        Example::

            >>> r = APIResource(group="", version="v1", name="configmaps", kind="ConfigMap",
            ...                 namespaced=True)
            >>> r.object_path("", namespace="ns", verb="delete")
            Traceback (most recent call last):
            ...
            kubectrl.errors.InvalidPathSegmentError: delete configmaps: invalid name '': may not be empty (nothing was sent)
        """  # noqa: E501
        if name is None:
            raise InvalidPathSegmentError(
                "name", name, ["may not be empty"], verb=verb, resource=self.label
            )
        return self.path(namespace=namespace, name=name, subresource=subresource, verb=verb)


def parse_resource_list(body: Mapping[str, Any], group: str, version: str) -> list[APIResource]:
    """Turn an ``APIResourceList`` into :class:`APIResource` records (subresources folded in)."""
    resources: dict[str, APIResource] = {}
    subs: dict[str, set[str]] = {}
    for item in body.get("resources") or ():
        name = str(item.get("name", ""))
        if "/" in name:
            parent, _, sub = name.partition("/")
            subs.setdefault(parent, set()).add(sub)
            continue
        resources[name] = APIResource(
            group=str(item.get("group") or group),
            version=str(item.get("version") or version),
            name=name,
            kind=str(item.get("kind", "")),
            namespaced=bool(item.get("namespaced", False)),
            verbs=frozenset(item.get("verbs") or ()),
            short_names=tuple(item.get("shortNames") or ()),
            singular_name=str(item.get("singularName") or ""),
        )
    return [
        dataclasses.replace(r, subresources=frozenset(subs.get(n, ())))
        for n, r in resources.items()
    ]


Fetch = Callable[[str], Awaitable[Mapping[str, Any]]]


class RESTMapper:
    """Cached mapping from kinds and resources to :class:`APIResource`.

    ``fetch(path)`` performs a GET and returns the decoded JSON (the client passes its own
    rate-limited, retried GET).

    Guarantees: at most one discovery request per group-version in flight; a miss refetches once;
    :meth:`reset` drops everything.

    Example::

        mapper = RESTMapper(fetch)
        deployments = await mapper.for_kind(GroupVersionKind("apps", "v1", "Deployment"))
    """

    def __init__(self, fetch: Fetch) -> None:
        self._fetch = fetch
        self._cache: dict[tuple[str, str], list[APIResource]] = {}
        self._inflight: dict[tuple[str, str], asyncio.Future[list[APIResource]]] = {}

    def reset(self) -> None:
        """Forget every cached group-version."""
        self._cache.clear()

    async def for_kind(self, gvk: GroupVersionKind) -> APIResource:
        """The resource serving ``gvk`` (its main resource, not a subresource)."""
        return await self._lookup(
            gvk.group, gvk.version, lambda r: r.kind == gvk.kind, f"kind {gvk.kind!r}"
        )

    async def for_resource(self, gvr: GroupVersionResource) -> APIResource:
        """The resource named ``gvr`` (plural, singular or short name accepted)."""
        wanted = gvr.resource.lower()
        return await self._lookup(
            gvr.group,
            gvr.version,
            lambda r: wanted in (r.name, r.singular_name, *r.short_names),
            f"resource {gvr.resource!r}",
        )

    async def _lookup(
        self, group: str, version: str, match: Callable[[APIResource], bool], what: str
    ) -> APIResource:
        key = (group, version)
        for refresh in (False, True):
            resources = await self._group_version(key, refresh=refresh)
            for resource in resources:
                if match(resource):
                    return resource
        raise ResourceNotFoundError(
            f"no {what} in {join_api_version(group, version)} (asked the server's discovery; "
            "is the CRD installed and established?)"
        )

    async def _group_version(self, key: tuple[str, str], *, refresh: bool) -> list[APIResource]:
        if not refresh and key in self._cache:
            return self._cache[key]
        pending = self._inflight.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        fut: asyncio.Future[list[APIResource]] = asyncio.get_running_loop().create_future()
        self._inflight[key] = fut
        try:
            group, version = key
            path = discovery_path(group, version)
            try:
                body = await self._fetch(path)
                resources = parse_resource_list(body, group, version)
            except NotFoundError:
                resources = []  # group-version not (yet) served
            self._cache[key] = resources
            fut.set_result(resources)
            return resources
        except BaseException as err:
            if isinstance(err, asyncio.CancelledError):
                fut.cancel()
            else:
                fut.set_exception(err)
                fut.exception()  # mark retrieved: there may be no other waiter
            raise
        finally:
            del self._inflight[key]
