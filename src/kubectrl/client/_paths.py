"""The one checked builder of request paths: every verb, REST and WebSocket, gets its URL here.

A name, a namespace, a subresource (and the resource, group and version) each become exactly one
URL path segment, or the request is refused with
:class:`~kubectrl.errors.InvalidPathSegmentError` before anything is sent:

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

import urllib.parse

from kubectrl.errors import InvalidPathSegmentError

__all__ = [
    "COLLECTION",
    "check_container",
    "check_proxy_path",
    "check_request",
    "check_segment",
    "describe",
    "discovery_path",
    "namespaced_path",
    "pod_path",
    "resource_path",
    "segment_problems",
]

# RFC 3986 pchar without "%" (refused) and "/" (refused): kept as they are, like ':' in
# "system:node:x"; everything else is percent-encoded (UTF-8).
_SAFE = "!$&'()*+,;=:@-._~"


def segment_problems(value: str) -> list[str]:
    """What keeps ``value`` from being one path segment (``[]`` if nothing), as the apiserver's
    ``IsValidPathSegmentName`` words it.

    Example::

        >>> segment_problems("../x%6E")
        ["may not contain '/'", "may not contain '%'"]
        >>> segment_problems("..")
        ["may not be '..'"]
    """
    if value in (".", ".."):
        return [f"may not be {value!r}"]
    return [f"may not contain {c!r}" for c in ("/", "%") if c in value]


def check_segment(
    value: object,
    *,
    argument: str,
    verb: str,
    resource: str,
    required: bool = True,
) -> str:
    """``value`` as one escaped path segment, or :class:`InvalidPathSegmentError` naming
    ``argument``, the value, ``verb`` and ``resource``. ``required=False`` lets ``""`` through
    (returned as ``""``: the caller leaves the segment out).

    Example::

        >>> check_segment("a b", argument="name", verb="get", resource="configmaps")
        'a%20b'
    """
    if not isinstance(value, str):
        raise InvalidPathSegmentError(
            argument,
            value,
            [f"must be a string, not {type(value).__name__}"],
            verb=verb,
            resource=resource,
        )
    if not value:
        if required:
            raise InvalidPathSegmentError(
                argument, value, ["may not be empty"], verb=verb, resource=resource
            )
        return ""
    problems = segment_problems(value)
    if problems:
        raise InvalidPathSegmentError(argument, value, problems, verb=verb, resource=resource)
    return urllib.parse.quote(value, safe=_SAFE)


#: ``name=`` of :func:`check_request` for a verb of a whole collection (no name in its path).
COLLECTION: object = object()


def describe(resource: object) -> str:
    """How a refusal names the resource before discovery resolved it (no request is sent):
    an :class:`~kubectrl.client.APIResource` by its label, a model class by its name, a kind by
    ``Kind (apiVersion)``, a resource by ``plural (apiVersion)``.

    Example::

        >>> describe(("apps/v1", "Deployment"))
        'Deployment (apps/v1)'
    """
    label = getattr(resource, "label", None)
    if isinstance(label, str):
        return label
    if isinstance(resource, type):
        return resource.__name__
    api_version = getattr(resource, "api_version", None)
    for attribute in ("kind", "resource"):
        value = getattr(resource, attribute, None)
        if isinstance(value, str) and isinstance(api_version, str):
            return f"{value} ({api_version})"
    if isinstance(resource, tuple) and len(resource) == 2:
        return f"{resource[1]} ({resource[0]})"
    return repr(resource)


def check_request(
    verb: str,
    resource: object,
    *,
    name: object = COLLECTION,
    namespace: object = None,
    subresource: object = "",
) -> None:
    """Refuse, before anything is sent (discovery included), a ``name`` (required unless
    ``COLLECTION``), ``namespace`` (``None`` or ``""``: none) or ``subresource`` that is not one
    path segment; :class:`InvalidPathSegmentError` names the argument, ``verb`` and
    :func:`describe` of ``resource``.

    Example::

        >>> check_request("delete", ("v1", "ConfigMap"), name="", namespace="ns")
        Traceback (most recent call last):
        ...
        kubectrl.errors.InvalidPathSegmentError: delete ConfigMap (v1): invalid name '': may not be empty (nothing was sent)
    """  # noqa: E501
    what = describe(resource)
    if namespace is not None:
        check_segment(namespace, argument="namespace", verb=verb, resource=what, required=False)
    if name is not COLLECTION:
        check_segment(name, argument="name", verb=verb, resource=what)
    check_segment(subresource, argument="subresource", verb=verb, resource=what, required=False)
    if subresource and name is COLLECTION:
        raise InvalidPathSegmentError(
            "subresource",
            subresource,
            ["is of one object, and no name was given"],
            verb=verb,
            resource=what,
        )


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
