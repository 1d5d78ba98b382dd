"""Discovery and the RESTMapper: from ``apiVersion`` + ``kind`` (or a GVR) to a URL and a scope.

Only the group-version actually asked about is fetched (``/api/v1`` or ``/apis/<group>/<version>``),
not the whole discovery tree, and the answer is cached. A miss (an unknown kind, or a group-version
the server did not serve yet) fetches that group-version again once before failing, so a CRD
installed after the client started is found on first use, like client-go's
``DeferredDiscoveryRESTMapper`` reset on ``NoKindMatchError``. Concurrent misses for one
group-version share one request.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from kubectrl.client._paths import discovery_path, resource_path
from kubectrl.errors import InvalidPathSegmentError, NotFoundError, ResourceNotFoundError
from kubectrl.objects import GroupVersionKind, GroupVersionResource, join_api_version

__all__ = ["APIResource", "RESTMapper"]


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
        other characters are percent-encoded (see :mod:`kubectrl.client._paths`).
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
