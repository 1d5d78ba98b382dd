"""FakeAPI: the API core (:mod:`kubectrl.apiserver`) served in memory through an httpx transport.

The core does the work under its lock in plain functions (no ``await`` inside), so the blocking
client (whose ``AsyncClient`` runs on a loop in another thread) and an ``AsyncClient`` on the
test's loop can share one :class:`FakeAPI`. What the fake adds: the transport, injected faults
(:meth:`FakeAPI.fail_next`, :meth:`FakeAPI.delay_next`), seeding and reading objects from Python,
and :class:`~kubectrl.testing.UnsupportedFeatureError` for what the core does not implement.
"""

from __future__ import annotations

import copy
import importlib
import json
import os
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from kubectrl._internal.clock import Clock, RealClock
from kubectrl._internal.warnings import warning_header
from kubectrl.apiserver.inprocess import (
    APICore,
    FeatureNotImplementedError,
    Reply,
    Request,
    ResourceInfo,
    StatusError,
    WatchStream,
    status_body,
)
from kubectrl.client import ClientConfig
from kubectrl.errors import APIError, UnsupportedFeatureError
from kubectrl.testing._fake_pods import FakePods

__all__ = ["FakeAPI"]

SERVER = "https://fake-apiserver"


def _response(reply: Reply) -> httpx.Response:
    content = reply.content
    if content is None:
        content = json.dumps(reply.body, separators=(",", ":")).encode()
    headers = [(b"Content-Type", b"application/json")]
    # A field's name may be any text: sent as UTF-8, as the apiserver writes it.
    headers += [(b"Warning", warning_header(text).encode()) for text in reply.warnings]
    return httpx.Response(reply.code, headers=headers, content=content)


class _WatchBody(httpx.AsyncByteStream):
    """A watch stream of the core as an httpx response body."""

    def __init__(self, stream: WatchStream) -> None:
        self.stream = stream

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self.stream.__aiter__()

    async def aclose(self) -> None:
        await self.stream.aclose()


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
        try:
            return await self.api._handle(request)
        except FeatureNotImplementedError as err:
            raise UnsupportedFeatureError(err.feature) from err

    async def open_websocket(
        self, path: str, query: list[tuple[str, str]], protocols: list[str]
    ) -> Any:
        """An in-memory WebSocket (exec; see :class:`~kubectrl.testing.FakeAPI`'s ``pods``)."""
        return await self.api.pods.open_websocket(path, query, protocols)


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

    ``version`` is the Kubernetes release imitated: ``"1.35"``, ``"1.36"`` or ``"1.37"`` (also
    ``"1.37.x"`` or the tables' exact patch, ``"v1.37.2"``), default ``"1.37"`` (as
    :data:`kubectrl.envtest.DEFAULT_VERSION`). Its ``/version`` answer, the built-in schemas
    it decodes built-in kinds with and the defaults and validation that changed between these
    releases follow it; another version is refused with a ``ValueError`` naming the supported
    ones. :attr:`version` is the chosen minor, :attr:`server_version` its release.

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

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        garbage_collection: bool = True,
        version: str | None = None,
    ) -> None:
        self.clock: Clock = clock or RealClock()
        self._core = APICore(self.clock, garbage_collection=garbage_collection, version=version)
        self._faults: list[_Fault] = []
        self._transport = _Transport(self)
        #: The pods' subresources: log texts (``pods.set_log``), an exec handler
        #: (``pods.on_exec``), eviction checked against PodDisruptionBudgets.
        self.pods = FakePods(self)
        for name in ("default", "kube-system", "kube-public", "kube-node-lease"):
            self.seed({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})

    def __repr__(self) -> str:
        count = sum(len(self._core.storage.range(info.key)) for info in self._core.registry.infos())
        return f"FakeAPI(objects={count}, resource_version={self._core.storage.revision})"

    # ------------------------------------------------------------------ public API

    @property
    def transport(self) -> httpx.AsyncBaseTransport:
        """The httpx async transport serving this fake."""
        return self._transport

    @property
    def version(self) -> str:
        """The Kubernetes minor imitated (``"1.37"``)."""
        return self._core.version

    @property
    def server_version(self) -> str:
        """The release whose tables are used (``"v1.37.2"``; ``/version`` adds ``-fake``)."""
        return self._core.server_version

    @property
    def resource_version(self) -> str:
        """The latest resourceVersion (as a list would report it)."""
        return str(self._core.storage.revision)

    @property
    def garbage_collection(self) -> bool:
        """Whether dependents of deleted owners are collected (settable)."""
        return self._core.store.gc.enabled

    @garbage_collection.setter
    def garbage_collection(self, value: bool) -> None:
        self._core.store.gc.enabled = value

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
            stored = self._seed("install_crd", doc)[0]
        return stored

    def seed(self, *objects: Any) -> list[dict[str, Any]]:
        """Create objects as given (status included), without field managers; returns them.

        Each argument is a dict, a model, a list of those, or a YAML path or text with one or
        more documents. A Namespace object creates the namespace; objects in a namespace that
        does not exist are refused (404), as on a real server.
        """
        return self._seed("seed", *objects)

    def _seed(self, caller: str, *objects: Any) -> list[dict[str, Any]]:
        # ``caller`` is the public method the user called, named in the errors.
        out: list[dict[str, Any]] = []
        for item in objects:
            for obj in self._as_dicts(item):
                api_version = str(obj.get("apiVersion") or "")
                group, _, version = api_version.rpartition("/")
                kind = str(obj.get("kind") or "")
                info = self._core.registry.by_kind(group, version, kind)
                if info is None:
                    raise ValueError(
                        f"{caller}: FakeAPI serves no kind {kind!r} in "
                        f"{group + '/' if group else ''}{version} (install its CRD first)"
                    )
                meta = obj.get("metadata") or {}
                ns = str(meta.get("namespace") or "default") if info.namespaced else None
                with self._core.lock, self._core.serving():
                    try:
                        created = self._core.store.create(
                            info, version, ns, obj, manager=None, keep_status=True
                        )
                    except StatusError as err:
                        raise ValueError(f"{caller}: {err.body.get('message')}") from None
                out.append(self._core.render(info, version, created))
        return out

    def objects(self, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
        """Copies of the stored objects of ``kind`` (a kind or plural), sorted by key."""
        info = self._find_target(kind)
        with self._core.lock:
            stored = self._core.storage.range(info.key)
            return [
                self._core.render(info, None, stored[k])
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
        with self._core.lock:
            self._faults.append(_Fault(verb.lower(), kind_or_resource, code, body, times))

    def delay_next(self, verb: str, kind_or_resource: str, seconds: float, times: int = 1) -> None:
        """Delay the next ``times`` requests of ``verb`` on a kind by ``seconds`` of the clock."""
        with self._core.lock:
            self._faults.append(_Fault(verb.lower(), kind_or_resource, 0, {}, times, seconds))

    def compact(self) -> None:
        """Forget history: watches and continue tokens from older resourceVersions get 410."""
        with self._core.lock:
            self._core.storage.compact()

    def drop_watches(self, kind: str | None = None) -> int:
        """End the open watch streams (of ``kind`` only, if given); returns how many."""
        return self._core.hub.drop(lambda w: kind is None or self._matches(w.info, kind))

    def bookmark(self, kind: str | None = None) -> int:
        """Send a BOOKMARK at the current resourceVersion to watches that allow bookmarks
        (the real server sends them about once a minute); returns how many got one."""
        return self._core.hub.bookmark(lambda w: kind is None or self._matches(w.info, kind))

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

    def _matches(self, info: ResourceInfo, target: str) -> bool:
        return self._core.registry.matches_target(info, target)

    def _find_target(self, target: str) -> ResourceInfo:
        info = self._core.registry.find_target(target)
        if info is None:
            raise ValueError(f"FakeAPI serves no kind or resource {target!r}")
        return info

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params)
        core_request = Request(
            request.method, request.url.path, params, dict(request.headers), await request.aread()
        )
        served = self.pods.serve(
            request.method, request.url.path, params, core_request.body, core_request.headers
        )
        if served is not None:
            code, answer_body = served
            if isinstance(answer_body, (str, bytes)):
                content = answer_body if isinstance(answer_body, bytes) else answer_body.encode()
                return httpx.Response(code, headers={"Content-Type": "text/plain"}, content=content)
            return _response(Reply(code, answer_body))
        try:
            found = self._core.route(core_request)
            if isinstance(found, Reply):
                return _response(found)
            fault = self._take_fault(found.verb, found.info, core_request)
            if fault is not None:
                if fault.delay:
                    await self.clock.sleep(fault.delay)
                else:
                    return _response(Reply(fault.code, fault.body))
            answer = self._core.serve(found, core_request)
        except StatusError as err:
            return _response(Reply(err.code, err.body, warnings=err.warnings))
        if isinstance(answer, Reply):
            return _response(answer)
        return httpx.Response(
            200,
            headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
            stream=_WatchBody(answer),
        )

    def _take_fault(self, verb: str, info: ResourceInfo, request: Request) -> _Fault | None:
        with self._core.lock:
            for fault in self._faults:
                verbs = {verb}
                if verb == "patch" and request.headers.get("content-type", "").startswith(
                    "application/apply-patch"
                ):
                    verbs.add("apply")
                if (fault.verb == "*" or fault.verb in verbs) and self._matches(info, fault.target):
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                    return fault
        return None
