"""The in-memory kube-apiserver behind an httpx async transport.

Everything happens under one lock in plain functions (no ``await`` inside), so the blocking
``Client`` (whose ``AsyncClient`` runs on a loop in another thread) and an ``AsyncClient`` on the
test's loop can share one :class:`FakeAPI`. Watchers are woken on their own loop with
``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import importlib
import json
import os
import random
import re
import threading
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from kubectrl import labels as _labels
from kubectrl._clock import Clock, RealClock
from kubectrl.client import ClientConfig
from kubectrl.errors import APIError
from kubectrl.testing import _apply, _patch, _resources, _validation
from kubectrl.testing._resources import ResourceInfo
from kubectrl.testing._status import (
    MODIFIED,
    StatusError,
    UnsupportedFeatureError,
    already_exists,
    bad_request,
    conflict,
    invalid,
    not_found,
    qualified,
    status_body,
)

__all__ = ["FakeAPI"]

SERVER = "https://fake-apiserver"
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_CONTINUE_TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list."
)
_INITIAL_EVENTS_END = "k8s.io/initial-events-end"
# Field selectors some built-ins accept besides metadata.name and metadata.namespace.
_EXTRA_FIELDS: dict[tuple[str, str], set[str]] = {
    ("", "pods"): {
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    },
    ("", "events"): {
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    },
    ("", "secrets"): {"type"},
    ("", "namespaces"): {"status.phase"},
    ("", "nodes"): {"spec.unschedulable"},
    ("", "replicationcontrollers"): {"status.replicas"},
    ("apps", "replicasets"): {"status.replicas"},
    ("batch", "jobs"): {"status.successful"},
    ("certificates.k8s.io", "certificatesigningrequests"): {"spec.signerName"},
}


def _now_string(clock: Clock) -> str:
    return clock.wall().strftime("%Y-%m-%dT%H:%M:%SZ")


def _json_response(code: int, body: Any) -> httpx.Response:
    return httpx.Response(
        code,
        headers={"Content-Type": "application/json"},
        content=json.dumps(body, separators=(",", ":")).encode(),
    )


def _field_value(obj: Mapping[str, Any], path: str) -> str:
    node: Any = obj
    for part in path.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    if node is None:
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


class _FieldSelector:
    def __init__(self, text: str | None, info: ResourceInfo) -> None:
        self.terms: list[tuple[str, str, str]] = []
        allowed = {"metadata.name", "metadata.namespace"} | _EXTRA_FIELDS.get(info.key, set())
        for raw in (text or "").split(","):
            raw = raw.strip()
            if not raw:
                continue
            match = re.match(r"^([^!=]+?)\s*(==|!=|=)\s*(.*)$", raw)
            if match is None:
                raise bad_request(f"invalid selector: '{text}'; can't understand '{raw}'")
            field, op, value = match.group(1).strip(), match.group(2), match.group(3).strip()
            if field not in allowed:
                if info.key in _EXTRA_FIELDS:  # kinds with their own field label conversion
                    raise bad_request(f"field label not supported: {field}")
                raise bad_request(
                    f'"{field}" is not a known field selector: only "metadata.name", '
                    '"metadata.namespace"'
                )
            self.terms.append((field, "!=" if op == "!=" else "=", value))

    def matches(self, obj: Mapping[str, Any]) -> bool:
        for field, op, value in self.terms:
            actual = _field_value(obj, field)
            if (actual == value) != (op == "="):
                return False
        return True


class _Event:
    __slots__ = ("key", "new", "old", "rv", "type")

    def __init__(
        self,
        rv: int,
        key: tuple[str, str],
        type_: str,
        new: dict[str, Any],
        old: dict[str, Any] | None,
    ) -> None:
        self.rv = rv
        self.key = key
        self.type = type_
        self.new = new
        self.old = old


class _Watcher:
    def __init__(
        self,
        api: FakeAPI,
        info: ResourceInfo,
        version: str,
        namespace: str | None,
        selector: _labels.Selector,
        fields: _FieldSelector,
        bookmarks: bool,
        metadata_only: bool,
    ) -> None:
        self.api = api
        self.info = info
        self.version = version
        self.namespace = namespace
        self.selector = selector
        self.fields = fields
        self.bookmarks = bookmarks
        self.metadata_only = metadata_only
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.closed = False

    def matches(self, obj: Mapping[str, Any] | None) -> bool:
        if obj is None:
            return False
        meta = obj.get("metadata") or {}
        if self.namespace is not None and meta.get("namespace") != self.namespace:
            return False
        return self.selector.matches_object(obj) and self.fields.matches(obj)

    def line(self, type_: str, obj: Mapping[str, Any]) -> bytes:
        body = self.api._render(self.info, self.version, obj, metadata_only=self.metadata_only)
        return json.dumps({"type": type_, "object": body}, separators=(",", ":")).encode() + b"\n"

    def event_line(self, event: _Event) -> bytes | None:
        now, before = self.matches(event.new), self.matches(event.old)
        if event.type == "MODIFIED":
            if now and not before:
                return self.line("ADDED", event.new)
            if before and not now and event.old is not None:
                # cache_watcher.go: the previous object (which matched), at the event's RV.
                left = copy.deepcopy(event.old)
                left["metadata"]["resourceVersion"] = str(event.rv)
                return self.line("DELETED", left)
        if not now:
            return None
        return self.line(event.type, event.new)

    def push(self, data: bytes | None) -> None:
        if self.closed:
            return
        if data is None:
            self.closed = True
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, data)
        except RuntimeError:  # the watcher's loop is closed
            self.closed = True


class _WatchBody(httpx.AsyncByteStream):
    def __init__(
        self, api: FakeAPI, watcher: _Watcher, first: list[bytes], timeout: float | None
    ) -> None:
        self.api = api
        self.watcher = watcher
        self.first = first
        self.timeout = timeout
        self._timer: asyncio.Task[None] | None = None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self.timeout is not None:
            self._timer = asyncio.ensure_future(self._expire(self.timeout))
        for line in self.first:
            yield line
        while True:
            data = await self.watcher.queue.get()
            if data is None:
                return
            yield data

    async def _expire(self, seconds: float) -> None:
        # Like the watch cache (cache_watcher.go nextBookmarkTime): with bookmarks allowed, one
        # bookmark about 2 s before timeoutSeconds ends the stream.
        if self.watcher.bookmarks and seconds > 2:
            await self.api.clock.sleep(seconds - 2)
            with self.api._lock:
                self.watcher.push(self.api._bookmark_line(self.watcher))
            seconds = 2
        await self.api.clock.sleep(seconds)
        self.watcher.push(None)

    async def aclose(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self.api._forget(self.watcher)


class _Fault:
    def __init__(
        self,
        verb: str,
        target: str,
        code: int,
        body: dict[str, Any],
        times: int,
        delay: float = 0.0,
    ) -> None:
        self.verb = verb
        self.target = target
        self.code = code
        self.body = body
        self.times = times
        self.delay = delay


class _Transport(httpx.AsyncBaseTransport):
    def __init__(self, api: FakeAPI) -> None:
        self.api = api

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self.api._handle(request)


class FakeAPI:
    """An in-memory kube-apiserver that kubectrl clients talk to unchanged.

    It speaks the HTTP API (paths, query parameters, ``Status`` errors, watch streams) through
    an httpx transport, so ``AsyncClient(api.config())``, ``Client(api.config())`` and a
    ``Manager`` on that config run as against a real server. Behaviour the contract suite
    (``tests/contract``) checks against a real kube-apiserver: resourceVersions, uid,
    creationTimestamp, generation, status subresource, optimistic concurrency, real error
    bodies, label and field selectors, namespaces, finalizers, owner references with garbage
    collection, merge/JSON/strategic patches, server-side apply, watches with bookmarks and
    410 after :meth:`compact`, pagination, CRD defaults and discovery. What it does not do
    raises :class:`~kubectrl.testing.UnsupportedFeatureError` naming the feature.

    ``clock`` times creationTimestamps, watch ``timeoutSeconds`` and :meth:`delay_next`;
    ``garbage_collection=False`` leaves dependents of deleted owners alone (as on a control
    plane without kube-controller-manager).

    Example::

        >>> import asyncio
        >>> from kubectrl.client import AsyncClient
        >>> async def demo():
        ...     api = FakeAPI()
        ...     async with AsyncClient(api.config()) as client:
        ...         await client.create({"apiVersion": "v1", "kind": "ConfigMap",
        ...                              "metadata": {"name": "x", "namespace": "default"}})
        ...         got = await client.get(("v1", "ConfigMap"), "x", namespace="default")
        ...     return got["metadata"]["resourceVersion"] != ""
        >>> asyncio.run(demo())
        True
    """

    def __init__(self, *, clock: Clock | None = None, garbage_collection: bool = True) -> None:
        self.clock: Clock = clock or RealClock()
        self.garbage_collection = garbage_collection
        self._lock = threading.RLock()
        self._resources: dict[tuple[str, str], ResourceInfo] = {}
        self._objects: dict[tuple[str, str], dict[tuple[str, str], dict[str, Any]]] = {}
        self._rv = 0
        self._compacted = 0
        self._history: list[_Event] = []
        self._watchers: list[_Watcher] = []
        self._faults: list[_Fault] = []
        self._transport = _Transport(self)
        for info in _resources.builtin_resources():
            self._register(info)
        for name in ("default", "kube-system", "kube-public", "kube-node-lease"):
            self.seed({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})

    def __repr__(self) -> str:
        return (
            f"FakeAPI(objects={sum(len(v) for v in self._objects.values())}, "
            f"resource_version={self._rv})"
        )

    # ------------------------------------------------------------------ public API

    @property
    def transport(self) -> httpx.AsyncBaseTransport:
        """The httpx async transport serving this fake."""
        return self._transport

    @property
    def resource_version(self) -> str:
        """The latest resourceVersion (as a list would report it)."""
        return str(self._rv)

    def config(self, **overrides: Any) -> ClientConfig:
        """A :class:`~kubectrl.client.ClientConfig` for this fake (no rate limit by default).

        Example: ``AsyncClient(api.config())`` or ``api.config(namespace="ns")``.
        """
        options: dict[str, Any] = {
            "server": SERVER,
            "transport": self._transport,
            "rate_limit": None,
            "source": "kubectrl.testing.FakeAPI",
        }
        options.update(overrides)
        return ClientConfig(**options)

    def install_crd(self, crd: Mapping[str, Any] | str | os.PathLike[str]) -> dict[str, Any]:
        """Install a CustomResourceDefinition (a dict or a YAML file); returns the stored CRD.

        Its kind is then served (discovery included), with schema defaults, pruning and
        validation and the status/scale subresources the CRD declares.
        """
        docs = self._documents(crd) if not isinstance(crd, Mapping) else [dict(crd)]
        stored: dict[str, Any] = {}
        for doc in docs:
            if doc.get("kind") != "CustomResourceDefinition":
                raise ValueError(
                    "install_crd: expected a CustomResourceDefinition, "
                    f"got kind {doc.get('kind')!r}"
                )
            stored = self.seed(doc)[0]
        return stored

    def seed(self, *objects: Any) -> list[dict[str, Any]]:
        """Create objects as given (status included), without field managers; returns them.

        Each argument is a dict, a model, a list of those, or a YAML path or text with one or
        more documents. A Namespace object creates the namespace; objects in a namespace that
        does not exist are refused (404), as on a real server.
        """
        out: list[dict[str, Any]] = []
        for item in objects:
            for obj in self._as_dicts(item):
                api_version = str(obj.get("apiVersion") or "")
                group, _, version = api_version.rpartition("/")
                info = self._by_kind(group, version, str(obj.get("kind") or ""))
                meta = obj.get("metadata") or {}
                ns = str(meta.get("namespace") or "default") if info.namespaced else None
                with self._lock:
                    try:
                        created = self._create(
                            info, version, ns, obj, manager=None, keep_status=True
                        )
                    except StatusError as err:
                        raise ValueError(f"seed: {err.body.get('message')}") from None
                out.append(self._render(info, version, created))
        return out

    def objects(self, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
        """Copies of the stored objects of ``kind`` (a kind or plural), sorted by key."""
        info = self._find_target(kind)
        with self._lock:
            stored = self._objects.get(info.key, {})
            return [
                self._render(info, None, stored[k])
                for k in sorted(stored)
                if namespace is None or k[0] == namespace
            ]

    def fail_next(
        self, verb: str, kind_or_resource: str, error: APIError | int, times: int = 1
    ) -> None:
        """Make the next ``times`` requests of ``verb`` on a kind fail with ``error``.

        ``verb``: get, list, watch, create, update, patch, apply, delete, deletecollection (or
        ``*``); ``kind_or_resource``: ``ConfigMap``, ``configmaps``, ``deployments.apps`` or
        ``*``; ``error``: an :class:`~kubectrl.errors.APIError` or an HTTP status code.

        The client retries a 429 (any verb) and a 5xx (GET, apply) per its ``RetryPolicy``, so
        such a fault needs ``times`` above ``config.retry.max_attempts`` to reach the caller.

        Example: ``api.fail_next("update", "ConfigMap", 409)``.
        """
        if isinstance(error, APIError):
            body = (
                dict(error.status)
                if error.status.get("kind") == "Status"
                else status_body(
                    error.code, error.server_message or str(error), reason=error.reason or None
                )
            )
            code = int(body.get("code") or error.code)
        else:
            code = int(error)
            body = status_body(code, f"injected failure ({code}) by FakeAPI.fail_next")
        with self._lock:
            self._faults.append(_Fault(verb.lower(), kind_or_resource, code, body, times))

    def delay_next(self, verb: str, kind_or_resource: str, seconds: float, times: int = 1) -> None:
        """Delay the next ``times`` requests of ``verb`` on a kind by ``seconds`` of the clock."""
        with self._lock:
            self._faults.append(_Fault(verb.lower(), kind_or_resource, 0, {}, times, seconds))

    def compact(self) -> None:
        """Forget history: watches and continue tokens from older resourceVersions get 410."""
        with self._lock:
            self._compacted = self._rv
            self._history.clear()

    def drop_watches(self, kind: str | None = None) -> int:
        """End the open watch streams (of ``kind`` only, if given); returns how many."""
        with self._lock:
            targets = [
                w for w in self._watchers if kind is None or self._matches_target(w.info, kind)
            ]
            for watcher in targets:
                watcher.push(None)
                self._watchers.remove(watcher)
        return len(targets)

    def bookmark(self, kind: str | None = None) -> int:
        """Send a BOOKMARK at the current resourceVersion to watches that allow bookmarks
        (the real server sends them about once a minute); returns how many got one."""
        with self._lock:
            sent = 0
            for watcher in self._watchers:
                if watcher.bookmarks and (kind is None or self._matches_target(watcher.info, kind)):
                    watcher.push(self._bookmark_line(watcher))
                    sent += 1
            return sent

    # ------------------------------------------------------------------ plumbing

    @staticmethod
    def _documents(source: str | os.PathLike[str]) -> list[dict[str, Any]]:
        yaml: Any = importlib.import_module("yaml")
        text = str(source)
        if isinstance(source, os.PathLike) or ("\n" not in text and os.path.exists(text)):
            with open(source, encoding="utf-8") as f:
                text = f.read()
        return [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]

    def _as_dicts(self, item: Any) -> list[dict[str, Any]]:
        if isinstance(item, (str, os.PathLike)):
            return self._documents(item)
        if isinstance(item, Mapping):
            if str(item.get("kind", "")).endswith("List") and isinstance(item.get("items"), list):
                return [copy.deepcopy(dict(i)) for i in item["items"]]
            return [copy.deepcopy(dict(item))]
        if isinstance(item, (list, tuple)):
            return [d for i in item for d in self._as_dicts(i)]
        from kubectrl import kinds

        return [kinds.to_dict(item)]

    def _register(self, info: ResourceInfo) -> None:
        self._resources[info.key] = info
        self._objects.setdefault(info.key, {})

    def _by_kind(self, group: str, version: str, kind: str) -> ResourceInfo:
        for info in self._resources.values():
            if info.group == group and info.kind == kind and version in info.versions:
                return info
        raise ValueError(
            f"FakeAPI serves no kind {kind!r} in "
            f"{group + '/' if group else ''}{version} (install its CRD first)"
        )

    @staticmethod
    def _matches_target(info: ResourceInfo, target: str) -> bool:
        return target in ("*", info.kind, info.plural, qualified(info.plural, info.group))

    def _find_target(self, target: str) -> ResourceInfo:
        for info in self._resources.values():
            if self._matches_target(info, target):
                return info
        raise ValueError(f"FakeAPI serves no kind or resource {target!r}")

    def _render(
        self,
        info: ResourceInfo,
        version: str | None,
        obj: Mapping[str, Any],
        metadata_only: bool = False,
    ) -> dict[str, Any]:
        out = copy.deepcopy(dict(obj))
        out["apiVersion"] = info.api_version(version)
        out["kind"] = info.kind
        if info.crd and version is not None:
            _resources.apply_defaults(info.schemas.get(version), out)
        if metadata_only:
            return {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": out.get("metadata", {}),
            }
        return _ordered(out)

    def _bookmark_line(self, watcher: _Watcher, *, initial_end: bool = False) -> bytes:
        meta: dict[str, Any] = {"resourceVersion": str(self._rv)}
        if initial_end:
            meta["annotations"] = {_INITIAL_EVENTS_END: "true"}
        obj = {
            "kind": watcher.info.kind,
            "apiVersion": watcher.info.api_version(watcher.version),
            "metadata": meta,
        }
        if watcher.metadata_only:
            obj = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": meta,
            }
        return (
            json.dumps({"type": "BOOKMARK", "object": obj}, separators=(",", ":")).encode() + b"\n"
        )

    def _forget(self, watcher: _Watcher) -> None:
        with self._lock:
            watcher.closed = True
            if watcher in self._watchers:
                self._watchers.remove(watcher)

    def _next_rv(self) -> int:
        self._rv += 1
        return self._rv

    def _emit(
        self, info: ResourceInfo, type_: str, new: dict[str, Any], old: dict[str, Any] | None
    ) -> None:
        event = _Event(
            self._rv, info.key, type_, copy.deepcopy(new), copy.deepcopy(old) if old else None
        )
        self._history.append(event)
        for watcher in list(self._watchers):
            if watcher.info.key == info.key:
                line = watcher.event_line(event)
                if line is not None:
                    watcher.push(line)

    # ------------------------------------------------------------------ HTTP

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        try:
            route = self._route(request.method, request.url.path, dict(request.url.params))
            if isinstance(route, httpx.Response):
                return route
            info, version, ns, name, sub, verb = route
            fault = self._take_fault(verb, info, request)
            if fault is not None:
                if fault.delay:
                    await self.clock.sleep(fault.delay)
                else:
                    return _json_response(fault.code, fault.body)
            if verb == "watch":
                return self._watch(info, version, ns, dict(request.url.params), request)
            with self._lock:
                code, out = self._serve(info, version, ns, name, sub, verb, request, body)
            return _json_response(code, out)
        except StatusError as err:
            return _json_response(err.code, err.body)

    def _take_fault(self, verb: str, info: ResourceInfo, request: httpx.Request) -> _Fault | None:
        with self._lock:
            for fault in self._faults:
                verbs = {verb}
                if verb == "patch" and request.headers.get("content-type", "").startswith(
                    "application/apply-patch"
                ):
                    verbs.add("apply")
                if (fault.verb == "*" or fault.verb in verbs) and self._matches_target(
                    info, fault.target
                ):
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                    return fault
        return None

    def _route(self, method: str, path: str, params: dict[str, str]) -> Any:
        from kubectrl.testing import _discovery

        parts = [p for p in path.split("/") if p]
        discovery = _discovery.answer(self, parts)
        if discovery is not None:
            if method != "GET":
                raise StatusError.make(
                    405, "the server does not allow this method on the requested resource"
                )
            return _json_response(200, discovery)
        if len(parts) >= 3 and parts[0] == "api":
            group, version, rest = "", parts[1], parts[2:]
        elif len(parts) >= 4 and parts[0] == "apis":
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise StatusError.make(404, "the server could not find the requested resource")
        ns: str | None = None
        if (
            rest[0] == "namespaces"
            and len(rest) >= 3
            and not (group == "" and len(rest) == 3 and rest[2] in ("status", "finalize"))
        ):
            ns, rest = rest[1], rest[2:]
        info = self._resources.get((group, rest[0]))
        if info is None or version not in info.versions or len(rest) > 3:
            raise StatusError.make(404, "the server could not find the requested resource")
        if ns is not None and not info.namespaced:
            raise StatusError.make(404, "the server could not find the requested resource")
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else ""
        if sub and not (
            (sub == "status" and info.status) or (sub == "scale" and info.scale is not None)
        ):
            raise StatusError.make(404, "the server could not find the requested resource")
        if name is not None and info.namespaced and ns is None:
            raise StatusError.make(404, "the server could not find the requested resource")
        verb = {
            ("GET", True): "get",
            ("PUT", True): "update",
            ("PATCH", True): "patch",
            ("DELETE", True): "delete",
            ("GET", False): "list",
            ("POST", False): "create",
            ("DELETE", False): "deletecollection",
        }.get((method, name is not None))
        if verb is None:
            raise StatusError.make(
                405, "the server does not allow this method on the requested resource"
            )
        if verb == "list" and params.get("watch") in ("true", "1"):
            verb = "watch"
        return info, version, ns, name, sub, verb

    def _serve(
        self,
        info: ResourceInfo,
        version: str,
        ns: str | None,
        name: str | None,
        sub: str,
        verb: str,
        request: httpx.Request,
        raw: bytes,
    ) -> tuple[int, Any]:
        params = dict(request.url.params)
        dry_run = params.get("dryRun") == "All"
        metadata_only = "as=PartialObjectMetadata" in request.headers.get("accept", "")
        manager = (
            params.get("fieldManager") or request.headers.get("user-agent", "unknown").split("/")[0]
        )
        if verb == "get":
            obj = self._get(info, ns, str(name))
            if sub == "scale":
                return 200, self._scale_of(info, obj)
            return 200, self._render(info, version, obj, metadata_only)
        if verb == "list":
            return 200, self._list(info, version, ns, params, metadata_only)
        content_type = request.headers.get("content-type", "application/json").split(";")[0].strip()
        body = self._decode(raw, content_type)
        if verb == "create":
            if not isinstance(body, dict):
                raise bad_request("the body of the request must be a JSON object")
            self._check_type(info, version, body)
            ns = self._body_namespace(info, ns, body)
            created = self._create(info, version, ns, body, manager=manager, dry_run=dry_run)
            return 201, self._render(info, version, created)
        if verb == "update":
            if not isinstance(body, dict):
                raise bad_request("the body of the request must be a JSON object")
            if sub == "scale":
                return 200, self._update_scale(info, version, ns, str(name), body, manager, dry_run)
            self._check_type(info, version, body)
            self._body_namespace(info, ns, body)
            body_name = (body.get("metadata") or {}).get("name")
            if body_name and body_name != name:
                raise bad_request(
                    f"the name of the object ({body_name}) does "
                    f"not match the name on the URL ({name})"
                )
            updated = self._update(
                info, version, ns, str(name), body, sub=sub, manager=manager, dry_run=dry_run
            )
            return 200, self._render(info, version, updated)
        if verb == "patch":
            return 200, self._patch(
                info, version, ns, str(name), sub, content_type, body, params, manager, dry_run
            )
        if verb == "delete":
            options = body if isinstance(body, dict) else {}
            return self._delete(
                info, version, ns, str(name), options, dry_run or options.get("dryRun") == ["All"]
            )
        if verb == "deletecollection":
            options = body if isinstance(body, dict) else {}
            items = self._select(info, ns, params)
            deleted = []
            for obj in items:
                meta = obj["metadata"]
                self._delete(info, version, meta.get("namespace"), meta["name"], options, dry_run)
                item = self._render(info, version, obj)
                if not info.crd:  # typed list items carry no kind/apiVersion
                    item.pop("kind", None)
                    item.pop("apiVersion", None)
                deleted.append(item)
            return 200, {
                "kind": info.list_kind,
                "apiVersion": info.api_version(version),
                "metadata": {"resourceVersion": str(self._rv)},
                "items": deleted,
            }
        raise StatusError.make(
            405, "the server does not allow this method on the requested resource"
        )

    @staticmethod
    def _decode(raw: bytes, content_type: str) -> Any:
        if not raw:
            return None
        try:
            if content_type == "application/apply-patch+yaml":
                yaml: Any = importlib.import_module("yaml")
                return yaml.safe_load(raw.decode())
            return json.loads(raw)
        except ValueError as err:
            raise bad_request(f"the body of the request could not be decoded: {err}") from None

    @staticmethod
    def _check_type(info: ResourceInfo, version: str, body: Mapping[str, Any]) -> None:
        expected = info.api_version(version)
        given = body.get("apiVersion")
        if given and given != expected:
            raise bad_request(
                f"the API version in the data ({given}) does not "
                f"match the expected API version ({expected})"
            )
        kind = body.get("kind")
        if kind and kind != info.kind:
            raise bad_request(
                f"the kind in the data ({kind}) does not match the expected kind ({info.kind})"
            )

    @staticmethod
    def _body_namespace(info: ResourceInfo, ns: str | None, body: dict[str, Any]) -> str | None:
        meta = body.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise bad_request("metadata must be an object")
        if not info.namespaced:
            meta.pop("namespace", None)
            return None
        given = meta.get("namespace")
        if given and ns and given != ns:
            raise bad_request(
                "the namespace of the provided object does "
                "not match the namespace sent on the request"
            )
        return ns or given

    def _get(self, info: ResourceInfo, ns: str | None, name: str) -> dict[str, Any]:
        obj = self._objects[info.key].get((ns or "", name))
        if obj is None:
            raise not_found(info.plural, info.group, name)
        return obj

    # ------------------------------------------------------------------ reads

    def _state_at(self, info: ResourceInfo, rv: int) -> dict[tuple[str, str], dict[str, Any]]:
        """The objects of ``info`` as they were at resourceVersion ``rv`` (history undone)."""
        if rv < self._compacted:
            raise StatusError.make(
                410, "The resourceVersion for the provided list is too old.", reason="Expired"
            )
        state = dict(self._objects[info.key])
        for event in reversed(self._history):
            if event.rv <= rv:
                break
            if event.key != info.key:
                continue
            meta = event.new["metadata"]
            key = (meta.get("namespace", ""), meta["name"])
            if event.type == "ADDED":
                state.pop(key, None)
            elif event.old is not None:
                state[key] = event.old
        return state

    def _select(
        self,
        info: ResourceInfo,
        ns: str | None,
        params: Mapping[str, str],
        at: int | None = None,
    ) -> list[dict[str, Any]]:
        try:
            selector = _labels.parse(params.get("labelSelector") or None)
        except ValueError as err:
            raise bad_request(f"unable to parse requirement: {err}") from None
        fields = _FieldSelector(params.get("fieldSelector"), info)
        stored = self._objects[info.key] if at is None else self._state_at(info, at)
        return [
            stored[k]
            for k in sorted(stored)
            if (ns is None or k[0] == ns)
            and selector.matches_object(stored[k])
            and fields.matches(stored[k])
        ]

    def _list(
        self,
        info: ResourceInfo,
        version: str,
        ns: str | None,
        params: Mapping[str, str],
        metadata_only: bool,
    ) -> dict[str, Any]:
        list_rv = self._rv
        token = params.get("continue")
        requested = params.get("resourceVersion") or ""
        if token:
            try:
                state = json.loads(base64.urlsafe_b64decode(token.encode()))
                list_rv, start = int(state["rv"]), tuple(state["start"])
            except (ValueError, KeyError, TypeError):
                raise bad_request("continue key is not valid: invalid continue token") from None
            if list_rv < self._compacted:
                raise StatusError.make(410, _CONTINUE_TOO_OLD, reason="Expired")
            items = self._select(info, ns, params, at=list_rv)
            items = [
                o
                for o in items
                if (o["metadata"].get("namespace", ""), o["metadata"]["name"]) > start
            ]
        elif requested not in ("", "0") and params.get("resourceVersionMatch") == "Exact":
            try:
                list_rv = int(requested)
            except ValueError:
                raise bad_request(f"invalid resource version: {requested}") from None
            items = self._select(info, ns, params, at=list_rv)
        else:
            items = self._select(info, ns, params)
        meta: dict[str, Any] = {"resourceVersion": str(list_rv)}
        limit = int(params.get("limit") or 0)
        if limit > 0 and len(items) > limit:
            last = items[limit - 1]["metadata"]
            meta["continue"] = base64.urlsafe_b64encode(
                json.dumps(
                    {"rv": list_rv, "start": [last.get("namespace", ""), last["name"]]}
                ).encode()
            ).decode()
            if not params.get("labelSelector") and not params.get("fieldSelector"):
                meta["remainingItemCount"] = len(items) - limit
            items = items[:limit]
        rendered = [self._render(info, version, o, metadata_only) for o in items]
        if not info.crd and not metadata_only:
            for item in rendered:
                item.pop("apiVersion", None)
                item.pop("kind", None)
        if metadata_only:
            return {
                "kind": "PartialObjectMetadataList",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": meta,
                "items": rendered,
            }
        return {
            "kind": info.list_kind,
            "apiVersion": info.api_version(version),
            "metadata": meta,
            "items": rendered,
        }

    def _watch(
        self,
        info: ResourceInfo,
        version: str,
        ns: str | None,
        params: Mapping[str, str],
        request: httpx.Request,
    ) -> httpx.Response:
        try:
            selector = _labels.parse(params.get("labelSelector") or None)
        except ValueError as err:
            raise bad_request(f"unable to parse requirement: {err}") from None
        fields = _FieldSelector(params.get("fieldSelector"), info)
        bookmarks = params.get("allowWatchBookmarks") in ("true", "1")
        initial = params.get("sendInitialEvents") in ("true", "1")
        if (
            params.get("sendInitialEvents") is not None
            and params.get("resourceVersionMatch") != "NotOlderThan"
        ):
            raise invalid(
                "ListOptions",
                "meta.k8s.io",
                "",
                [
                    (
                        "FieldValueForbidden",
                        "resourceVersionMatch",
                        (
                            "Forbidden: sendInitialEvents requires "
                            "setting resourceVersionMatch to NotOlderThan"
                        ),
                    )
                ],
            )
        if initial and not bookmarks:
            raise invalid(
                "ListOptions",
                "meta.k8s.io",
                "",
                [
                    (
                        "FieldValueForbidden",
                        "allowWatchBookmarks",
                        "Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true",
                    )
                ],
            )
        metadata_only = "as=PartialObjectMetadata" in request.headers.get("accept", "")
        timeout = float(params["timeoutSeconds"]) if params.get("timeoutSeconds") else None
        watcher = _Watcher(self, info, version, ns, selector, fields, bookmarks, metadata_only)
        rv_param = params.get("resourceVersion") or ""
        first: list[bytes] = []
        with self._lock:
            if initial or rv_param in ("", "0"):
                for obj in self._select(info, ns, {}):
                    if watcher.matches(obj):
                        first.append(watcher.line("ADDED", obj))
                if initial:
                    first.append(self._bookmark_line(watcher, initial_end=True))
            else:
                try:
                    since = int(rv_param)
                except ValueError:
                    raise bad_request(f"invalid resource version: {rv_param}") from None
                if since < self._compacted:
                    gone = status_body(
                        410,
                        f"too old resource version: {since} ({self._compacted})",
                        reason="Expired",
                    )
                    line = (
                        json.dumps(
                            {"type": "ERROR", "object": gone}, separators=(",", ":")
                        ).encode()
                        + b"\n"
                    )
                    return httpx.Response(
                        200, headers={"Content-Type": "application/json"}, content=line
                    )
                for event in self._history:
                    if event.rv > since and event.key == info.key:
                        line_or_none = watcher.event_line(event)
                        if line_or_none is not None:
                            first.append(line_or_none)
            self._watchers.append(watcher)
        return httpx.Response(
            200,
            headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
            stream=_WatchBody(self, watcher, first, timeout),
        )

    def _scale_of(self, info: ResourceInfo, obj: Mapping[str, Any]) -> dict[str, Any]:
        spec_path, status_path, selector_path = self._scale_paths(info)
        meta = obj["metadata"]
        selector = _field_value(obj, selector_path) if selector_path else ""
        if not info.crd:
            match = (obj.get("spec") or {}).get("selector") or {}
            selector = str(_labels.parse(match)) if match else ""
        status_replicas = _lookup(obj, status_path)
        status: dict[str, Any] = {
            "replicas": status_replicas if isinstance(status_replicas, int) else 0
        }
        if selector:
            status["selector"] = selector
        return {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                k: meta[k]
                for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                if k in meta
            },
            "spec": {"replicas": _lookup(obj, spec_path) or 0},
            "status": status,
        }

    @staticmethod
    def _scale_paths(info: ResourceInfo) -> tuple[str, str, str]:
        scale = info.scale or {}
        return (
            str(scale.get("specReplicasPath", ".spec.replicas")).lstrip("."),
            str(scale.get("statusReplicasPath", ".status.replicas")).lstrip("."),
            str(scale.get("labelSelectorPath", "")).lstrip("."),
        )

    # ------------------------------------------------------------------ writes

    def _check_namespace(self, info: ResourceInfo, ns: str | None, name: str) -> None:
        if not info.namespaced:
            return
        if not ns:
            raise bad_request(
                "the server could not find the requested resource: a namespace is required"
            )
        namespace = self._objects[("", "namespaces")].get(("", ns))
        if namespace is None:
            raise not_found("namespaces", "", ns)
        if (namespace.get("metadata") or {}).get("deletionTimestamp"):
            raise StatusError.make(
                403,
                (
                    f'{qualified(info.plural, info.group)} "{name}" is forbidden: unable to '
                    f"create new content in namespace {ns} because it is being terminated"
                ),
                details={
                    "name": name,
                    "group": info.group,
                    "kind": info.plural,
                    "causes": [
                        {
                            "reason": "NamespaceTerminating",
                            "message": f"namespace {ns} is being terminated",
                            "field": "metadata.namespace",
                        }
                    ],
                },
            )

    def _validate_name(self, info: ResourceInfo, name: str, obj: dict[str, Any]) -> None:
        if not name:
            raise invalid(
                info.kind,
                info.group,
                "",
                [
                    (
                        "FieldValueRequired",
                        "metadata.name",
                        "Required value: name or generateName is required",
                    )
                ],
            )
        # Namespaces are RFC 1123 labels, the rest (Services too, since v1.34) subdomains.
        pattern, message, limit = _DNS_SUBDOMAIN, _SUBDOMAIN_MSG, 253
        if info.key == ("", "namespaces"):
            pattern, message, limit = _DNS_LABEL, _LABEL_MSG, 63
        if len(name) > limit:
            message = f"must be no more than {limit} characters"
        if not pattern.match(name) or len(name) > limit:
            cause = ("FieldValueInvalid", "metadata.name", f'Invalid value: "{name}": {message}')
            probe = copy.deepcopy(obj)  # the other metadata errors come in the same answer
            _defaults(info, probe)
            raise invalid(
                info.kind, info.group, name, [cause, *_validation.validate(info, probe, None)]
            )

    def _prepare_custom(
        self, info: ResourceInfo, version: str, obj: dict[str, Any], name: str
    ) -> None:
        schema = info.schemas.get(version)
        if not schema:
            return
        _resources.prune(schema, obj, top=True)
        _resources.apply_defaults(schema, obj)
        errors = _resources.validate(schema, obj)
        if errors:
            raise invalid(info.kind, info.group, name, errors)

    def _create(
        self,
        info: ResourceInfo,
        version: str,
        ns: str | None,
        body: dict[str, Any],
        *,
        manager: str | None,
        keep_status: bool = False,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        obj = copy.deepcopy(body)
        meta = obj.setdefault("metadata", {})
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = str(meta["generateName"]) + "".join(
                random.choice(_NAME_CHARS)  # noqa: S311 (names, not secrets)
                for _ in range(5)
            )
        name = str(meta.get("name") or "")
        self._validate_name(info, name, obj)
        self._check_namespace(info, ns, name)
        if (ns or "", name) in self._objects[info.key]:
            raise already_exists(info.plural, info.group, name)
        obj["apiVersion"], obj["kind"] = info.api_version(version), info.kind
        for key in (
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "managedFields",
            "selfLink",
            "generation",
        ):
            meta.pop(key, None)
        if ns is not None:
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        if not keep_status and info.status:
            if info.crd:
                obj.pop("status", None)
            else:
                obj["status"] = {}
        _defaults(info, obj)
        if info.crd:
            self._prepare_custom(info, version, obj, name)
        _check(info, name, _validation.validate(info, obj, None))
        if info.key == ("apiextensions.k8s.io", "customresourcedefinitions"):
            crd_info = self._crd_info(obj)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = _now_string(self.clock)
        if info.generation:
            meta["generation"] = 1
        if manager is not None:
            _apply.record_update(
                None,
                obj,
                manager=manager,
                api_version=info.api_version(version),
                time=_now_string(self.clock),
                has_status=info.status,
                unstructured=info.crd,
            )
        _allocate(info, obj)  # after the field manager: admission and registry, not the writer
        if dry_run:
            return obj
        meta["resourceVersion"] = str(self._next_rv())
        obj = _ordered(obj)
        self._objects[info.key][(ns or "", name)] = obj
        if info.key == ("apiextensions.k8s.io", "customresourcedefinitions"):
            self._register(crd_info)
        self._emit(info, "ADDED", obj, None)
        return obj

    def _crd_info(self, crd: dict[str, Any]) -> ResourceInfo:
        try:
            crd_info = _resources.crd_resource(crd)
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise invalid(
                "CustomResourceDefinition",
                "apiextensions.k8s.io",
                str((crd.get("metadata") or {}).get("name", "")),
                [("FieldValueInvalid", "spec", f"Invalid value: {err}")],
            ) from None
        names = (crd.get("spec") or {}).get("names") or {}
        accepted = {k: v for k, v in names.items()}
        accepted.setdefault("singular", crd_info.singular)
        accepted.setdefault("listKind", crd_info.list_kind)
        now = _now_string(self.clock)
        crd["status"] = {
            "acceptedNames": accepted,
            "conditions": [
                {
                    "type": "NamesAccepted",
                    "status": "True",
                    "lastTransitionTime": now,
                    "reason": "NoConflicts",
                    "message": "no conflicts found",
                },
                {
                    "type": "Established",
                    "status": "True",
                    "lastTransitionTime": now,
                    "reason": "InitialNamesAccepted",
                    "message": "the initial names have been accepted",
                },
            ],
            "storedVersions": [
                v["name"] for v in (crd.get("spec") or {}).get("versions") or () if v.get("storage")
            ],
        }
        return crd_info

    def _update(
        self,
        info: ResourceInfo,
        version: str,
        ns: str | None,
        name: str,
        body: dict[str, Any],
        *,
        sub: str,
        manager: str | None,
        dry_run: bool,
        precondition_rv: bool = True,
        applied: bool = False,
    ) -> dict[str, Any]:
        old = self._get(info, ns, name)
        meta_in = body.get("metadata") or {}
        rv = meta_in.get("resourceVersion")
        if precondition_rv and not rv and info.crd:
            # customresource strategy: AllowUnconditionalUpdate is false.
            raise invalid(
                info.kind,
                info.group,
                name,
                [
                    (
                        "FieldValueInvalid",
                        "metadata.resourceVersion",
                        "Invalid value: 0x0: must be specified for an update",
                    )
                ],
            )
        if precondition_rv and rv and str(rv) != old["metadata"]["resourceVersion"]:
            raise conflict(info.plural, info.group, name, MODIFIED)
        uid = meta_in.get("uid")
        if uid and uid != old["metadata"]["uid"]:
            raise conflict(
                info.plural,
                info.group,
                name,
                (
                    f"Precondition failed: UID in precondition: {uid}, "
                    f"UID in object meta: {old['metadata']['uid']}"
                ),
            )
        if sub == "status":
            new = copy.deepcopy(old)
            if "status" in body:
                new["status"] = copy.deepcopy(body["status"])
            else:
                new.pop("status", None)
        else:
            new = copy.deepcopy(body)
            new["apiVersion"], new["kind"] = info.api_version(version), info.kind
            if info.status:
                if "status" in old:
                    new["status"] = copy.deepcopy(old["status"])
                else:
                    new.pop("status", None)
        meta = new.setdefault("metadata", {})
        old_meta = old["metadata"]
        for key in (
            "name",
            "namespace",
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
        ):
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)
        meta.pop("resourceVersion", None)
        meta.pop("selfLink", None)
        if applied:
            managed = (body.get("metadata") or {}).get("managedFields")
            if managed:
                meta["managedFields"] = copy.deepcopy(managed)
        elif "managedFields" in old_meta and not meta.get("managedFields"):
            meta["managedFields"] = copy.deepcopy(old_meta["managedFields"])
        if old_meta.get("deletionTimestamp"):
            added = [
                f
                for f in meta.get("finalizers") or ()
                if f not in (old_meta.get("finalizers") or ())
            ]
            if added:
                raise invalid(
                    info.kind,
                    info.group,
                    name,
                    [
                        (
                            "FieldValueForbidden",
                            "metadata.finalizers",
                            (
                                "Forbidden: no new finalizers can be "
                                "added if the object is being deleted, "
                                "found new finalizers "
                                f"[]string{{{', '.join(json.dumps(f) for f in added)}}}"
                            ),
                        )
                    ],
                )
        if sub != "status":
            _defaults(info, new)
        if info.crd:
            self._prepare_custom(info, version, new, name)
        _check(info, name, _validation.validate(info, new, old))
        if info.generation and _spec_of(info, new) != _spec_of(info, old):
            meta["generation"] = int(old_meta.get("generation") or 0) + 1
        if manager is not None and not applied:
            _apply.record_update(
                old,
                new,
                manager=manager,
                api_version=info.api_version(version),
                time=_now_string(self.clock),
                subresource=sub,
                has_status=info.status,
                unstructured=info.crd,
            )
        if _comparable(new) == _comparable(old):
            return old
        if info.key == ("apiextensions.k8s.io", "customresourcedefinitions") and sub != "status":
            crd_info = self._crd_info(new)
            if not dry_run:
                self._register(crd_info)
        if dry_run:
            new["metadata"]["resourceVersion"] = old_meta["resourceVersion"]
            return new
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            # The last finalizer is gone: the object goes; watchers get DELETED with the
            # state it was stored in (finalizers included), as from the apiserver.
            gone = self._remove(info, old)
            meta["resourceVersion"] = gone["metadata"]["resourceVersion"]
            return _ordered(new)
        meta["resourceVersion"] = str(self._next_rv())
        new = _ordered(new)
        self._objects[info.key][(ns or "", name)] = new
        self._emit(info, "MODIFIED", new, old)
        return new

    def _update_scale(
        self,
        info: ResourceInfo,
        version: str,
        ns: str | None,
        name: str,
        body: Mapping[str, Any],
        manager: str,
        dry_run: bool,
    ) -> dict[str, Any]:
        old = self._get(info, ns, name)
        rv = (body.get("metadata") or {}).get("resourceVersion")
        if rv and str(rv) != old["metadata"]["resourceVersion"]:
            raise conflict(info.plural, info.group, name, MODIFIED)
        replicas = (body.get("spec") or {}).get("replicas")
        new = copy.deepcopy(old)
        spec_path, _, _ = self._scale_paths(info)
        _assign(new, spec_path, replicas)
        updated = self._update(
            info, version, ns, name, new, sub="", manager=None, dry_run=dry_run
        )  # the apiserver records no field manager for a scale write
        return self._scale_of(info, updated)

    def _patch(
        self,
        info: ResourceInfo,
        version: str,
        ns: str | None,
        name: str,
        sub: str,
        content_type: str,
        patch: Any,
        params: Mapping[str, str],
        manager: str,
        dry_run: bool,
    ) -> dict[str, Any]:
        if content_type == "application/apply-patch+yaml":
            return self._server_side_apply(info, version, ns, name, sub, patch, params, dry_run)
        old = self._get(info, ns, name)
        if sub == "scale":
            current: Any = self._scale_of(info, old)
        else:
            current = self._render(info, version, old)
        if content_type == "application/merge-patch+json":
            new = _patch.merge_patch(current, patch)
        elif content_type == "application/json-patch+json":
            new = _patch.json_patch(current, patch)
        elif content_type == "application/strategic-merge-patch+json":
            if info.crd:
                raise StatusError.make(
                    415,
                    (
                        "the body of the request was in an unknown "
                        "format - accepted media types include: "
                        "application/json-patch+json, "
                        "application/merge-patch+json, application/apply-patch+yaml"
                    ),
                )
            new = _patch.strategic_merge_patch(current, patch)
        else:
            raise StatusError.make(
                415,
                (
                    "the body of the request was in an unknown format - accepted media types "
                    "include: application/json-patch+json, "
                    "application/merge-patch+json, application/apply-patch+yaml"
                )
                + ("" if info.crd else ", application/strategic-merge-patch+json"),
            )
        if not isinstance(new, dict):
            raise bad_request("the patched object is not a JSON object")
        if sub == "scale":
            return self._update_scale(info, version, ns, name, new, manager, dry_run)
        patched_meta = new.get("metadata") or {}
        if patched_meta.get("name", name) != name:
            raise bad_request(
                f"the name of the object ({patched_meta.get('name')}) "
                f"does not match the name on the URL ({name})"
            )
        updated = self._update(
            info, version, ns, name, new, sub=sub, manager=manager, dry_run=dry_run
        )
        return self._render(info, version, updated)

    def _server_side_apply(
        self,
        info: ResourceInfo,
        version: str,
        ns: str | None,
        name: str,
        sub: str,
        patch: Any,
        params: Mapping[str, str],
        dry_run: bool,
    ) -> dict[str, Any]:
        if not isinstance(patch, dict):
            raise bad_request("the body of an apply patch must be an object")
        manager = params.get("fieldManager")
        if not manager:
            raise bad_request(
                'PatchOptions.meta.k8s.io "" is invalid: fieldManager: '
                "Required value: is required for apply patch"
            )
        if sub == "scale":
            raise UnsupportedFeatureError("server-side apply to the scale subresource")
        self._check_type(info, version, patch)
        if not patch.get("apiVersion") or not patch.get("kind"):
            raise bad_request("apiVersion and kind must be set in an apply patch")
        meta = patch.get("metadata") or {}
        if meta.get("name") and meta["name"] != name:
            raise bad_request(
                f"the name of the object ({meta['name']}) "
                f"does not match the name on the URL ({name})"
            )
        force = params.get("force") in ("true", "1")
        api_version = info.api_version(version)
        now = _now_string(self.clock)
        existing = self._objects[info.key].get((ns or "", name))
        if existing is None:
            if sub:
                raise not_found(info.plural, info.group, name)
            body = _apply.server_side_apply(
                None,
                patch,
                manager=manager,
                force=force,
                api_version=api_version,
                time=now,
                has_status=info.status,
            )
            body.setdefault("metadata", {})["name"] = name
            managed = body["metadata"].pop("managedFields", None)
            created = self._create(info, version, ns, body, manager=None, dry_run=dry_run)
            if managed:
                created["metadata"]["managedFields"] = managed
            return self._render(info, version, created)
        rv = meta.get("resourceVersion")
        if rv and str(rv) != existing["metadata"]["resourceVersion"]:
            raise conflict(info.plural, info.group, name, MODIFIED)
        current = self._render(info, version, existing)
        result = _apply.server_side_apply(
            current,
            patch,
            manager=manager,
            force=force,
            api_version=api_version,
            time=now,
            subresource=sub,
            has_status=info.status,
        )
        updated = self._update(
            info,
            version,
            ns,
            name,
            result,
            sub=sub,
            manager=manager,
            dry_run=dry_run,
            precondition_rv=False,
            applied=True,
        )
        return self._render(info, version, updated)

    # ------------------------------------------------------------------ deletes

    def _delete(
        self,
        info: ResourceInfo,
        version: str,
        ns: str | None,
        name: str,
        options: Mapping[str, Any],
        dry_run: bool,
    ) -> tuple[int, Any]:
        obj = self._get(info, ns, name)
        meta = obj["metadata"]
        pre = options.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != meta["uid"]:
            # rest/delete.go BeforeDelete: the group-resource it names is the Kind.
            raise conflict(
                info.kind,
                info.group,
                name,
                f"the UID in the precondition ({pre['uid']}) does not match the UID in record "
                f"({meta['uid']}). The object might have been deleted and then recreated",
            )
        if pre.get("resourceVersion") and pre["resourceVersion"] != meta["resourceVersion"]:
            raise conflict(
                info.kind,
                info.group,
                name,
                f"the ResourceVersion in the precondition ({pre['resourceVersion']}) does not "
                f"match the ResourceVersion in record ({meta['resourceVersion']}). The object "
                "might have been modified",
            )
        if dry_run:
            return 200, self._render(info, version, obj)
        policy = options.get("propagationPolicy")
        if options.get("orphanDependents") is True:
            policy = "Orphan"
        finalizers = list(meta.get("finalizers") or ())
        if info.key == ("", "namespaces"):
            return 200, self._delete_namespace(info, version, obj)
        # registry/store.go: the apiserver itself adds the garbage collector's finalizer; the
        # collector (here: at once, when garbage_collection is on) does the rest.
        # An explicit policy replaces the other one's finalizer (also on an object already
        # being deleted); without one the finalizers stay as they are.
        if policy in ("Foreground", "Orphan", "Background"):
            wanted = {"Foreground": "foregroundDeletion", "Orphan": "orphan"}.get(policy)
            finalizers = [f for f in finalizers if f not in ("foregroundDeletion", "orphan")]
            if wanted:
                finalizers.append(wanted)
        if finalizers:
            if not meta.get("deletionTimestamp") or finalizers != list(
                meta.get("finalizers") or ()
            ):
                new = copy.deepcopy(obj)
                new_meta = new["metadata"]
                new_meta["finalizers"] = finalizers
                if not new_meta.get("deletionTimestamp"):
                    new_meta["deletionTimestamp"] = _now_string(self.clock)
                    new_meta["deletionGracePeriodSeconds"] = 0
                    if new_meta.get("generation"):
                        new_meta["generation"] = int(new_meta["generation"]) + 1
                new_meta["resourceVersion"] = str(self._next_rv())
                new = _ordered(new)
                self._objects[info.key][(ns or "", name)] = new
                self._emit(info, "MODIFIED", new, obj)
                obj = new
                if self.garbage_collection:
                    self._run_gc_finalizers(info, obj)
            return 200, self._render(info, version, obj)
        if info.key == ("", "pods"):
            # Graceful deletion with grace period 0 (an unscheduled pod): the pod is marked
            # (generation bumped, a MODIFIED event) and then removed.
            marked = copy.deepcopy(obj)
            marked_meta = marked["metadata"]
            marked_meta["deletionTimestamp"] = _now_string(self.clock)
            marked_meta["deletionGracePeriodSeconds"] = 0
            if marked_meta.get("generation"):
                marked_meta["generation"] = int(marked_meta["generation"]) + 1
            marked_meta["resourceVersion"] = str(self._next_rv())
            marked = _ordered(marked)
            self._objects[info.key][(ns or "", name)] = marked
            self._emit(info, "MODIFIED", marked, obj)
            obj = marked
        removed = self._remove(info, obj)
        if info.key == ("", "pods"):
            return 200, self._render(info, version, removed)
        details = {"name": name, "group": info.group, "kind": info.plural, "uid": meta["uid"]}
        return 200, {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": {k: v for k, v in details.items() if v},
        }

    def _run_gc_finalizers(self, info: ResourceInfo, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        uid = meta["uid"]
        if "orphan" in meta.get("finalizers", ()):
            self._orphan(uid)
            current = copy.deepcopy(obj)
            current["metadata"]["finalizers"] = [f for f in meta["finalizers"] if f != "orphan"]
            self._update(
                info,
                info.versions[0],
                meta.get("namespace"),
                meta["name"],
                current,
                sub="",
                manager=None,
                dry_run=False,
                precondition_rv=False,
            )
        elif "foregroundDeletion" in meta.get("finalizers", ()):
            for dep_info, dep in self._dependents(uid):
                dm = dep["metadata"]
                if dm.get("deletionTimestamp"):
                    continue
                self._delete(
                    dep_info,
                    dep_info.versions[0],
                    dm.get("namespace"),
                    dm["name"],
                    {"propagationPolicy": "Foreground"},
                    False,
                )
            self._sweep()

    def _remove(self, info: ResourceInfo, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        old = self._objects[info.key].pop(key, None)
        if old is None:
            return obj
        gone = copy.deepcopy(old)
        gone["metadata"]["resourceVersion"] = str(self._next_rv())
        self._emit(info, "DELETED", gone, old)
        if info.key == ("apiextensions.k8s.io", "customresourcedefinitions"):
            self._unregister_crd(gone)
        self._collect(meta["uid"])
        self._sweep()
        return gone

    def _unregister_crd(self, crd: Mapping[str, Any]) -> None:
        try:
            crd_info = _resources.crd_resource(crd)
        except (ValueError, KeyError, TypeError, AttributeError):
            return
        for obj in list(self._objects.get(crd_info.key, {}).values()):
            self._remove(self._resources[crd_info.key], obj)
        self._resources.pop(crd_info.key, None)
        self._objects.pop(crd_info.key, None)
        for watcher in [w for w in self._watchers if w.info.key == crd_info.key]:
            watcher.push(None)
            self._watchers.remove(watcher)

    def _dependents(self, uid: str) -> list[tuple[ResourceInfo, dict[str, Any]]]:
        out = []
        for key, stored in self._objects.items():
            for obj in stored.values():
                refs = obj["metadata"].get("ownerReferences") or ()
                if any(r.get("uid") == uid for r in refs):
                    out.append((self._resources[key], obj))
        return out

    def _exists_uid(self, uid: str) -> bool:
        return any(
            o["metadata"].get("uid") == uid for s in self._objects.values() for o in s.values()
        )

    def _orphan(self, uid: str) -> None:
        for info, dep in self._dependents(uid):
            new = copy.deepcopy(dep)
            refs = [r for r in new["metadata"].get("ownerReferences") or () if r.get("uid") != uid]
            if refs:
                new["metadata"]["ownerReferences"] = refs
            else:
                new["metadata"].pop("ownerReferences", None)
            self._update(
                info,
                info.versions[0],
                dep["metadata"].get("namespace"),
                dep["metadata"]["name"],
                new,
                sub="",
                manager=None,
                dry_run=False,
                precondition_rv=False,
            )

    def _collect(self, uid: str) -> None:
        """Background garbage collection of the dependents of a deleted owner."""
        if not self.garbage_collection:
            return
        for info, dep in self._dependents(uid):
            meta = dep["metadata"]
            current = self._objects[info.key].get((meta.get("namespace", ""), meta["name"]))
            if current is None:
                continue
            refs = current["metadata"].get("ownerReferences") or ()
            if any(r.get("uid") != uid and self._exists_uid(str(r.get("uid"))) for r in refs):
                new = copy.deepcopy(current)
                new["metadata"]["ownerReferences"] = [r for r in refs if r.get("uid") != uid]
                self._update(
                    info,
                    info.versions[0],
                    meta.get("namespace"),
                    meta["name"],
                    new,
                    sub="",
                    manager=None,
                    dry_run=False,
                    precondition_rv=False,
                )
            elif not current["metadata"].get("deletionTimestamp"):
                self._delete(info, info.versions[0], meta.get("namespace"), meta["name"], {}, False)

    def _sweep(self) -> None:
        """Finish foreground deletions and terminating namespaces whose dependents are gone."""
        for key, stored in list(self._objects.items()):
            info = self._resources.get(key)
            if info is None:
                continue
            for obj in list(stored.values()):
                meta = obj["metadata"]
                if not meta.get("deletionTimestamp"):
                    continue
                if (
                    self.garbage_collection
                    and "foregroundDeletion" in (meta.get("finalizers") or ())
                    and not self._dependents(meta["uid"])
                ):
                    new = copy.deepcopy(obj)
                    new["metadata"]["finalizers"] = [
                        f for f in meta["finalizers"] if f != "foregroundDeletion"
                    ]
                    self._update(
                        info,
                        info.versions[0],
                        meta.get("namespace"),
                        meta["name"],
                        new,
                        sub="",
                        manager=None,
                        dry_run=False,
                        precondition_rv=False,
                    )
                elif (
                    key == ("", "namespaces")
                    and not meta.get("finalizers")
                    and not self._in_namespace(meta["name"])
                ):
                    self._remove(info, obj)

    def _in_namespace(self, ns: str) -> bool:
        return any(
            self._resources[key].namespaced and any(k[0] == ns for k in stored)
            for key, stored in self._objects.items()
            if key in self._resources
        )

    def _delete_namespace(
        self, info: ResourceInfo, version: str, obj: dict[str, Any]
    ) -> dict[str, Any]:
        name = obj["metadata"]["name"]
        if not obj["metadata"].get("deletionTimestamp"):
            new = copy.deepcopy(obj)
            new["metadata"]["deletionTimestamp"] = _now_string(self.clock)
            new["metadata"]["deletionGracePeriodSeconds"] = 0
            new.setdefault("status", {})["phase"] = "Terminating"
            new["metadata"]["resourceVersion"] = str(self._next_rv())
            self._objects[info.key][("", name)] = new
            self._emit(info, "MODIFIED", new, obj)
            for key, stored in list(self._objects.items()):
                res = self._resources.get(key)
                if res is None or not res.namespaced:
                    continue
                for child in [o for k, o in list(stored.items()) if k[0] == name]:
                    if child["metadata"].get("deletionTimestamp"):
                        continue
                    self._delete(res, res.versions[0], name, child["metadata"]["name"], {}, False)
            self._sweep()
        current = self._objects[info.key].get(("", name), obj)
        return self._render(info, version, current)


# --------------------------------------------------------------------------- helpers


def _check(info: ResourceInfo, name: str, causes: list[tuple[str, str, str]]) -> None:
    if causes:
        raise invalid(info.kind, info.group, name, causes)


def _lookup(obj: Any, path: str) -> Any:
    node = obj
    for part in path.split("."):
        if not part:
            continue
        node = node.get(part) if isinstance(node, Mapping) else None
    return node


def _assign(obj: dict[str, Any], path: str, value: Any) -> None:
    parts = [p for p in path.split(".") if p]
    node = obj
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def _spec_of(info: ResourceInfo, obj: Mapping[str, Any]) -> Any:
    if info.crd:
        skip = {"metadata", "apiVersion", "kind"} | ({"status"} if info.status else set())
        return {k: v for k, v in obj.items() if k not in skip}
    return obj.get("spec")


def _comparable(obj: Mapping[str, Any]) -> Any:
    out = copy.deepcopy(dict(obj))
    meta = out.get("metadata") or {}
    meta.pop("resourceVersion", None)
    for entry in meta.get("managedFields") or ():
        entry.pop("time", None)
    return out


_METADATA_ORDER = (
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
)


def _ordered(obj: dict[str, Any]) -> dict[str, Any]:
    """Keys in the order the apiserver's JSON has them (kind, apiVersion, metadata first)."""
    head: dict[str, Any] = {k: obj[k] for k in ("kind", "apiVersion", "metadata") if k in obj}
    meta = head.get("metadata")
    if isinstance(meta, dict):
        known = {k: meta[k] for k in _METADATA_ORDER if k in meta}
        head["metadata"] = {**known, **{k: v for k, v in meta.items() if k not in known}}
    return {**head, **{k: v for k, v in obj.items() if k not in head}}


def _defaults(info: ResourceInfo, obj: dict[str, Any]) -> None:
    """The few built-in defaults the fake applies (the real server applies many more)."""
    if info.key == ("", "namespaces"):
        meta = obj.setdefault("metadata", {})
        meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta.get("name", "")
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        status = obj.setdefault("status", {})
        status.setdefault("phase", "Active")
    elif info.key == ("apps", "deployments"):
        spec = obj.setdefault("spec", {})
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
        strategy = spec.setdefault("strategy", {"type": "RollingUpdate"})
        if strategy.get("type", "RollingUpdate") == "RollingUpdate":
            strategy.setdefault("type", "RollingUpdate")
            strategy.setdefault("rollingUpdate", {}).setdefault("maxUnavailable", "25%")
            strategy["rollingUpdate"].setdefault("maxSurge", "25%")
        _pod_defaults((spec.get("template") or {}).get("spec"))
    elif info.key == ("", "pods"):
        spec = obj.get("spec")
        _pod_defaults(spec)
        if isinstance(spec, dict):
            spec.setdefault("enableServiceLinks", True)
        status = obj.setdefault("status", {})
        if not status:
            status.update({"phase": "Pending", "qosClass": _qos_class(spec)})
    elif info.key == ("", "services"):
        spec = obj.setdefault("spec", {})
        kind = spec.setdefault("type", "ClusterIP")
        if kind != "ExternalName":
            spec.setdefault("sessionAffinity", "None")
            spec.setdefault("internalTrafficPolicy", "Cluster")
            for port in spec.get("ports") or ():
                if isinstance(port, dict):
                    port.setdefault("protocol", "TCP")
                    port.setdefault("targetPort", port.get("port"))
        status = obj.setdefault("status", {})
        status.setdefault("loadBalancer", {})
    elif info.key == ("", "secrets"):
        string_data = obj.pop("stringData", None)
        if isinstance(string_data, dict):
            data = obj.setdefault("data", {})
            for key, value in string_data.items():
                data[key] = base64.b64encode(str(value).encode()).decode()
        obj.setdefault("type", "Opaque")


def _allocate(info: ResourceInfo, obj: dict[str, Any]) -> None:
    """What admission plugins and registries add on create (no field manager owns it)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if info.key == ("", "pods"):
        spec.setdefault("priority", 0)
        spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
        tolerations = spec.setdefault("tolerations", [])
        for taint in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
            if not any(t.get("key") == taint for t in tolerations if isinstance(t, dict)):
                tolerations.append(
                    {
                        "key": taint,
                        "operator": "Exists",
                        "effect": "NoExecute",
                        "tolerationSeconds": 300,
                    }
                )
    elif info.key == ("", "services") and spec.get("type", "ClusterIP") != "ExternalName":
        if "clusterIP" not in spec:
            spec["clusterIP"] = f"10.0.{random.randint(0, 255)}.{random.randint(1, 254)}"  # noqa: S311
        if spec["clusterIP"] != "None":
            spec.setdefault("clusterIPs", [spec["clusterIP"]])
            spec.setdefault("ipFamilies", ["IPv4"])
            spec.setdefault("ipFamilyPolicy", "SingleStack")


def _qos_class(spec: Any) -> str:
    containers = (spec or {}).get("containers") or [] if isinstance(spec, dict) else []
    resources = [c.get("resources") or {} for c in containers if isinstance(c, dict)]
    if not any(r.get("requests") or r.get("limits") for r in resources):
        return "BestEffort"
    guaranteed = all(
        all((r.get("limits") or {}).get(k) for k in ("cpu", "memory"))
        and all(
            (r.get("requests") or {}).get(k, v) == v for k, v in (r.get("limits") or {}).items()
        )
        for r in resources
    )
    return "Guaranteed" if guaranteed else "Burstable"


def _pod_defaults(spec: Any) -> None:
    if not isinstance(spec, dict):
        return
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for container in list(spec.get("containers") or ()) + list(spec.get("initContainers") or ()):
        if not isinstance(container, dict):
            continue
        container.setdefault("terminationMessagePath", "/dev/termination-log")
        container.setdefault("terminationMessagePolicy", "File")
        image = str(container.get("image", ""))
        tag = image.rsplit("/", 1)[-1]
        latest = ":" not in tag or tag.endswith(":latest")
        container.setdefault(
            "imagePullPolicy", "Always" if latest and "@" not in image else "IfNotPresent"
        )
        container.setdefault("resources", {})
        for port in container.get("ports") or ():
            if isinstance(port, dict):
                port.setdefault("protocol", "TCP")
