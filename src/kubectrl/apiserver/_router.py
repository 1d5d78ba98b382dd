"""Requests: what one says (method, path, query, headers, body) and what it asks for (a route).

A path names discovery, or a resource, a version, a namespace, a name and a subresource; the
method (and ``?watch``) makes the verb, as the apiserver's ``RequestInfoFactory`` does.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from kubectrl.apiserver._resources import discovery as _discovery
from kubectrl.apiserver._resources.info import ResourceInfo
from kubectrl.apiserver._resources.registry import Registry
from kubectrl.apiserver._status import StatusError

__all__ = ["Reply", "Request", "Route", "invalid_name", "route"]

_VERBS = {
    ("GET", True): "get",
    ("PUT", True): "update",
    ("PATCH", True): "patch",
    ("DELETE", True): "delete",
    ("GET", False): "list",
    ("POST", False): "create",
    ("DELETE", False): "deletecollection",
}


@dataclasses.dataclass(frozen=True)
class Request:
    """One HTTP request as the core reads it (``headers`` keys are lower case)."""

    method: str
    path: str
    params: Mapping[str, str] = dataclasses.field(default_factory=dict)
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    body: bytes = b""

    @property
    def content_type(self) -> str:
        """The media type of the body, without parameters (``application/json`` by default)."""
        return self.headers.get("content-type", "application/json").split(";")[0].strip()

    @property
    def metadata_only(self) -> bool:
        """Whether the client asked for ``PartialObjectMetadata``."""
        return "as=PartialObjectMetadata" in self.headers.get("accept", "")


@dataclasses.dataclass(frozen=True)
class Reply:
    """A whole answer: an HTTP status code and its JSON body (or ``content``, sent as is), and
    the texts of its ``Warning`` headers."""

    code: int
    body: Any
    content: bytes | None = None
    warnings: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Route:
    """What a resource request asks for."""

    info: ResourceInfo
    version: str
    namespace: str | None
    name: str | None
    subresource: str
    verb: str


def _not_found() -> StatusError:
    return StatusError.make(404, "the server could not find the requested resource")


def _not_allowed() -> StatusError:
    return StatusError.make(405, "the server does not allow this method on the requested resource")


def invalid_name(name: str) -> StatusError | None:
    """The 400 the apiserver answers for an object name (as decoded from the path) that cannot
    be one path segment, else ``None``."""
    # The registry's key functions refuse a name that cannot be one path segment (after the
    # path was decoded: a %2e%2e is ".."), as apimachinery's IsValidPathSegmentName says, before
    # any storage is read: 400 "Name parameter invalid: "..": may not be '..'".
    if name in (".", ".."):
        problems = [f"may not be '{name}'"]
    else:
        problems = [f"may not contain '{c}'" for c in ("/", "%") if c in name]
    if not problems:
        return None
    quoted = json.dumps(name, ensure_ascii=False)
    return StatusError.make(
        400, f"Name parameter invalid: {quoted}: {';'.join(problems)}", reason="BadRequest"
    )


def route(registry: Registry, request: Request) -> Route | Reply:
    """The route of a resource request, or the :class:`Reply` to a discovery request.

    Raises :class:`~kubectrl.apiserver._status.StatusError` (404, 405) for what is not served.
    """
    parts = [p for p in request.path.split("/") if p]
    discovery = _discovery.answer(registry, parts)
    if discovery is not None:
        if request.method != "GET":
            raise _not_allowed()
        return Reply(200, discovery)
    if len(parts) >= 3 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 4 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        raise _not_found()
    ns: str | None = None
    if (
        rest[0] == "namespaces"
        and len(rest) >= 3
        and not (group == "" and len(rest) == 3 and rest[2] in ("status", "finalize"))
    ):
        ns, rest = rest[1], rest[2:]
    info = registry.get((group, rest[0]))
    if info is None or version not in info.versions or len(rest) > 3:
        raise _not_found()
    if ns is not None and not info.namespaced:
        raise _not_found()
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else ""
    if sub and not (
        (sub == "status" and info.status)
        or (sub == "scale" and info.scale is not None)
        or sub in info.subresources
    ):
        raise _not_found()
    if name is not None and info.namespaced and ns is None:
        raise _not_found()
    invalid = invalid_name(name) if name is not None else None
    if invalid is not None:
        raise invalid
    verb = _VERBS.get((request.method, name is not None))
    if verb is None:
        raise _not_allowed()
    if verb == "list" and request.params.get("watch") in ("true", "1"):
        verb = "watch"
    return Route(info, version, ns, name, sub, verb)
