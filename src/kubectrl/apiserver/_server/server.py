"""The extension API server: the API core served over HTTPS with aiohttp.

What it adds to the core (which does the API machinery, the same code
:class:`~kubectrl.testing.FakeAPI` runs): the HTTP server and TLS, delegated authentication and
authorization (:mod:`kubectrl.apiserver._server.auth`), aggregated discovery, OpenAPI v2/v3
documents, ``Table`` output, admission rules and custom subresources
(:mod:`kubectrl.apiserver._server.declare`), and health checks (``/healthz``, ``/livez``,
``/readyz``, served to anyone).

Limits, with k8s.io/apiserver's defaults: at most 400 read requests and 200 writes in flight
(``--max-requests-inflight``, ``--max-mutating-requests-inflight``; watches are not counted, as
the apiserver counts no long-running request), beyond which a request is answered 429 with
``Retry-After: 1`` before its body is read (``filters/maxinflight.go``); request bodies of at
most 3 MiB (``MaxRequestBodyBytes``), a larger one answered 413 (refused on its
``Content-Length`` before it is read). The history is compacted every 5 minutes
(``--etcd-compaction-interval``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shutil
import ssl
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubectrl._internal.clock import Clock, RealClock
from kubectrl._internal.warnings import warning_header
from kubectrl.apiserver._admission.admission import Admission
from kubectrl.apiserver._admission.lifecycle import declared_namespaces
from kubectrl.apiserver._endpoints.core import APICore
from kubectrl.apiserver._endpoints.watch import WatchStream
from kubectrl.apiserver._router import Reply, Request, Route
from kubectrl.apiserver._server import openapi as _openapi
from kubectrl.apiserver._server import table as _table
from kubectrl.apiserver._server.auth import Attributes, DelegatingAuth, UserInfo
from kubectrl.apiserver._server.declare import (
    AdmissionRule,
    Rules,
    ServedResource,
    SubresourceHandler,
    SubresourceRequest,
    served_resources,
)
from kubectrl.apiserver._server.tls import self_signed
from kubectrl.apiserver._status import StatusError, status_body
from kubectrl.apiserver._storage.memory import COMPACTION_INTERVAL, Compactor, Storage
from kubectrl.resources import CustomResource

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["APIServer"]

log = logging.getLogger("kubectrl.apiserver")

_HEALTH = ("/healthz", "/livez", "/readyz")
_DISCOVERY_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
_VERB_OF_METHOD = {
    "GET": "get",
    "POST": "create",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}
_OPERATIONS = frozenset({"CREATE", "UPDATE", "DELETE"})
_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: Request bodies larger than this are refused with 413 (k8s.io/apiserver's
#: ``MaxRequestBodyBytes`` default).
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024
#: Read requests (get, list) in flight beyond which one is refused with 429 (watches are not
#: counted): kube-apiserver's ``--max-requests-inflight`` default.
MAX_REQUESTS_INFLIGHT = 400
#: Writes in flight beyond which one is refused with 429:
#: kube-apiserver's ``--max-mutating-requests-inflight`` default.
MAX_MUTATING_REQUESTS_INFLIGHT = 200


def _json_response(
    code: int,
    body: Any,
    content_type: str = "application/json",
    warnings: Sequence[str] = (),
) -> web.Response:
    from aiohttp import web

    headers = [("Content-Type", content_type)]
    headers += [("Warning", warning_header(text)) for text in warnings]
    return web.Response(
        status=code, body=json.dumps(body, separators=(",", ":")).encode(), headers=headers
    )


def _status_response(code: int, message: str, reason: str = "") -> web.Response:
    return _json_response(code, status_body(code, message, reason=reason or None))


def _too_many_requests() -> web.Response:
    # maxinflight.go tooManyRequests: 429 with Retry-After 1 (here with a Status body).
    response = _status_response(
        429, "Too many requests, please try again later.", "TooManyRequests"
    )
    response.headers["Retry-After"] = "1"
    return response


def _too_large(limit: int) -> web.Response:
    # As the apiserver's handlers answer a body over MaxRequestBodyBytes.
    return _status_response(
        413, f"Request entity too large: limit is {limit}", "RequestEntityTooLarge"
    )


def _is_watch(request: web.Request) -> bool:
    if request.method != "GET":
        return False
    return request.query.get("watch") in ("1", "true") or "/watch/" in request.path


class APIServer:
    """An extension API server for the kinds ``models`` declare (``CustomResource``
    subclasses), served over HTTPS behind kube-apiserver's aggregation layer.

    * ``storage``: where objects live (:class:`~kubectrl.apiserver.MemoryStorage` by default;
      :class:`~kubectrl.apiserver.SQLiteStorage` keeps them, and a watch's place, across
      restarts).
    * ``auth``: a :class:`~kubectrl.apiserver.DelegatingAuth` (what a server behind
      kube-apiserver uses), or ``None`` to serve every request without authentication or
      authorization (for tests on loopback only; it must be said explicitly).
    * ``namespaces``: whether a namespace exists (a write into one that does not is 404);
      ``None`` accepts any.
    * ``compaction_interval``: seconds between compactions of the storage's history (5 minutes,
      kube-apiserver's default; each keeps the history since the previous one), ``None`` for
      none.
    * ``max_requests_inflight`` and ``max_mutating_requests_inflight``: the read requests
      (watches not counted) and the writes served at once (400 and 200, kube-apiserver's
      defaults); one more is answered 429 with ``Retry-After``. ``0``: no limit.
    * ``max_request_body_bytes``: the largest request body accepted (3 MiB, the apiserver's);
      a larger one is answered 413.

    Admission rules (:meth:`admission`) and custom subresources (:meth:`subresource`) are
    registered before :meth:`start`.

    Example::

        server = APIServer([Flunder, Fischer], storage=SQLiteStorage("wardle.db"),
                           auth=DelegatingAuth(load_config()))
        await server.start(port=8443, cert_file="tls.crt", key_file="tls.key")
    """

    def __init__(
        self,
        models: Sequence[type[CustomResource]],
        *,
        auth: DelegatingAuth | None,
        storage: Storage | None = None,
        namespaces: Callable[[str], bool] | None = None,
        clock: Clock | None = None,
        title: str = "kubectrl extension API server",
        compaction_interval: float | None = COMPACTION_INTERVAL,
        max_requests_inflight: int = MAX_REQUESTS_INFLIGHT,
        max_mutating_requests_inflight: int = MAX_MUTATING_REQUESTS_INFLIGHT,
        max_request_body_bytes: int = MAX_REQUEST_BODY_BYTES,
    ) -> None:
        if not models:
            raise ValueError("APIServer needs at least one CustomResource model to serve")
        if min(max_requests_inflight, max_mutating_requests_inflight) < 0:
            raise ValueError("the limits on requests in flight cannot be negative")
        if max_request_body_bytes <= 0:
            raise ValueError("max_request_body_bytes must be positive")
        self.clock: Clock = clock or RealClock()
        self.core = APICore(self.clock, garbage_collection=False, storage=storage)
        for info in self.core.registry.infos():  # serve only the declared kinds
            self.core.registry.unregister(info.key)
        self.resources: dict[tuple[str, str], ServedResource] = {}
        for served in served_resources(models):
            self.core.registry.register(served.info)
            self.resources[served.info.key] = served
        self.core.store.admission = Admission(
            declared_namespaces(namespaces), [Rules(self.core, self.resources)]
        )
        self.auth = auth
        self.title = title
        self.max_requests_inflight = max_requests_inflight
        self.max_mutating_requests_inflight = max_mutating_requests_inflight
        self.max_request_body_bytes = max_request_body_bytes
        #: Requests in flight now: reads (watches not counted) and writes.
        self.inflight = {False: 0, True: 0}
        self.compactor = (
            None
            if compaction_interval is None
            else Compactor(self.core.storage, self.core.lock, self.clock, compaction_interval)
        )
        self._compacting: asyncio.Task[None] | None = None
        self._runner: web.AppRunner | None = None
        self._port = 0
        self._cert_dir: Path | None = None
        #: The serving certificate (PEM), once started.
        self.certificate_pem = b""

    def __repr__(self) -> str:
        kinds = ", ".join(s.info.kind for s in self.resources.values())
        return f"APIServer([{kinds}], port={self._port or None})"

    def _served(self, model: type[CustomResource]) -> ServedResource:
        kind = getattr(model, "__kubectrl_kind__", None)
        served = None if kind is None else self.resources.get((kind.group, kind.plural))
        if served is None:
            raise ValueError(f"{model!r} is not one of the kinds this server serves")
        return served

    # ------------------------------------------------------------------ declarations

    def admission(
        self, model: type[CustomResource], operations: Sequence[str] = ("CREATE", "UPDATE")
    ) -> Callable[[AdmissionRule], AdmissionRule]:
        """Decorator: run ``rule(request)`` before each write of ``operations`` to ``model``'s
        objects (under the core's lock, so it sees a consistent store; keep it quick), with the
        object as it will be stored (decoded, pruned, defaulted, with its uid): validating
        admission, as the apiserver runs it after the resource's strategy.

        The rule raises :class:`~kubectrl.apiserver.AdmissionError` to refuse the write.
        """
        served = self._served(model)
        wanted = frozenset(operations)
        if not wanted or not wanted <= _OPERATIONS:
            raise ValueError(f"operations must be among {sorted(_OPERATIONS)}, not {operations!r}")

        def register(rule: AdmissionRule) -> AdmissionRule:
            served.rules.append((wanted, rule))
            return rule

        return register

    def subresource(
        self, model: type[CustomResource], name: str
    ) -> Callable[[SubresourceHandler], SubresourceHandler]:
        """Decorator: serve ``<plural>/<object>/<name>`` with an async handler.

        The handler gets a :class:`~kubectrl.apiserver.SubresourceRequest` and returns a
        JSON-able mapping (sent as is) or an async iterator of bytes (streamed as it yields,
        e.g. a log). Authorization asks for the subresource with the verb of the HTTP method.
        """
        served = self._served(model)
        if not name or "/" in name or name in ("status", "scale") or name in served.subresources:
            raise ValueError(f"subresource name {name!r} is empty, taken or reserved")

        def register(handler: SubresourceHandler) -> SubresourceHandler:
            served.subresources[name] = handler
            return handler

        return register

    # ------------------------------------------------------------------ serving

    @property
    def port(self) -> int:
        """The port served on (after :meth:`start`)."""
        return self._port

    def app(self) -> web.Application:
        """The aiohttp application (every path goes to one dispatcher)."""
        from aiohttp import web

        app = web.Application(client_max_size=self.max_request_body_bytes)
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        return app

    async def start(
        self,
        *,
        host: str = "0.0.0.0",  # noqa: S104 - a server in a Pod listens on every address
        port: int = 8443,
        cert_file: str | None = None,
        key_file: str | None = None,
    ) -> None:
        """Load the delegated authentication config, then serve HTTPS on ``host:port``
        (``port=0``: a free one, see :attr:`port`).

        Without ``cert_file`` and ``key_file`` the server makes a self-signed certificate for
        ``host`` (its PEM is :attr:`certificate_pem`, what a client verifies it with), as
        ``k8s.io/apiserver`` does: for development; behind kube-apiserver, give a certificate
        that names the Service.
        """
        from aiohttp import web

        if self._runner is not None:
            raise RuntimeError("the API server is already started")
        if (cert_file is None) != (key_file is None):
            raise ValueError("give both cert_file and key_file, or neither (self-signed)")
        if cert_file is None or key_file is None:
            cert_file, key_file = self._self_signed(host)
        else:
            self.certificate_pem = await asyncio.to_thread(Path(cert_file).read_bytes)
        if self.auth is not None:
            await self.auth.load()
            context = self.auth.server_ssl_context(cert_file, key_file)
        else:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.minimum_version = ssl.TLSVersion.TLSv1_2
            context.load_cert_chain(cert_file, key_file)
        runner = web.AppRunner(
            self.app(), access_log=None, handle_signals=False, shutdown_timeout=1.0
        )
        await runner.setup()
        site = web.TCPSite(runner, host, port, ssl_context=context)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._port = int(runner.addresses[0][1])
        self._runner = runner
        if self.compactor is not None:
            self._compacting = asyncio.ensure_future(self.compactor.run())
        log.info("API server serving on %s:%d", host, self._port)

    def _self_signed(self, host: str) -> tuple[str, str]:
        hosts = [host] if host not in ("0.0.0.0", "::", "") else ["127.0.0.1", "localhost"]  # noqa: S104
        cert, key = self_signed(hosts)
        self.certificate_pem = cert
        directory = Path(tempfile.mkdtemp(prefix="kubectrl-apiserver-"))
        (directory / "tls.crt").write_bytes(cert)
        key_path = directory / "tls.key"
        key_path.touch(mode=0o600)
        key_path.write_bytes(key)
        self._cert_dir = directory
        return str(directory / "tls.crt"), str(key_path)

    async def stop(self) -> None:
        """Stop serving (open watches end). Idempotent."""
        runner, self._runner = self._runner, None
        if self._compacting is not None:
            self._compacting.cancel()
            self._compacting = None
        if runner is not None:
            self.core.hub.drop(lambda _watcher: True)
            await runner.cleanup()
        if self._cert_dir is not None:
            shutil.rmtree(self._cert_dir, ignore_errors=True)
            self._cert_dir = None

    async def __aenter__(self) -> APIServer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ------------------------------------------------------------------ requests

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        if request.path in _HEALTH:
            from aiohttp import web

            return web.Response(text="ok")
        user = None
        if self.auth is not None:
            ssl_object = (
                request.transport.get_extra_info("ssl_object") if request.transport else None
            )
            der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
            headers = {k.lower(): v for k, v in request.headers.items()}
            try:
                user = await self.auth.authenticate(der, headers, request.headers)
            except (PermissionError, OSError) as err:
                log.warning("authentication failed: %s", err)
                return _status_response(500, f"authentication failed: {err}")
            if user is None:
                log.debug("401 %s %s: no credentials", request.method, request.path)
                return _status_response(401, "Unauthorized", "Unauthorized")
        if _is_watch(request):  # long-running: not counted, as maxinflight.go counts none
            return await self._handle(request, user)
        mutating = request.method not in _READ_METHODS
        limit = self.max_mutating_requests_inflight if mutating else self.max_requests_inflight
        if limit and self.inflight[mutating] >= limit:
            log.debug("429 %s %s: %d requests in flight", request.method, request.path, limit)
            return _too_many_requests()
        self.inflight[mutating] += 1
        try:
            return await self._handle(request, user)
        finally:
            self.inflight[mutating] -= 1

    async def _handle(self, request: web.Request, user: UserInfo | None) -> web.StreamResponse:
        from aiohttp import web

        limit = self.max_request_body_bytes
        if request.content_length is not None and request.content_length > limit:
            return _too_large(limit)  # refused before it is read
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:  # a body without Content-Length, cut at the limit
            return _too_large(limit)
        core_request = Request(
            request.method,
            request.path,
            params=dict(request.query),
            headers={k.lower(): v for k, v in request.headers.items()},
            body=body,
        )
        try:
            found, custom = self._route(core_request)
            if user is not None and self.auth is not None:
                denied = await self._authorize(user, core_request, found, custom)
                if denied is not None:
                    return denied
            return await self._serve(request, core_request, found, custom, user)
        except StatusError as err:
            return _json_response(err.code, err.body)

    def _route(self, request: Request) -> tuple[Route | Reply | None, str]:
        """The core's route (or discovery reply), ``None`` for the server's own paths; and the
        name of a custom subresource."""
        parts = [p for p in request.path.split("/") if p]
        if parts[:1] == ["openapi"]:
            return None, ""
        try:
            return self.core.route(request), ""
        except StatusError as err:
            if err.code != 404 or len(parts) < 5:
                raise
            # <object path>/<custom subresource>: the core routes the object path.
            parent = Request("GET", "/" + "/".join(parts[:-1]), params={})
            try:
                found = self.core.route(parent)
            except StatusError:
                raise err from None
            served = self.resources.get(found.info.key) if isinstance(found, Route) else None
            if served is None or found is None or parts[-1] not in served.subresources:
                raise
            return found, parts[-1]

    async def _authorize(
        self, user: UserInfo, request: Request, found: Route | Reply | None, custom: str
    ) -> web.Response | None:
        if isinstance(found, Route):
            verb = (
                _VERB_OF_METHOD.get(request.method, request.method.lower())
                if custom
                else (found.verb)
            )
            attributes = Attributes(
                verb=verb,
                group=found.info.group,
                version=found.version,
                resource=found.info.plural,
                subresource=custom or found.subresource,
                namespace=found.namespace or "",
                name=found.name or "",
            )
        else:
            attributes = Attributes(verb=request.method.lower(), path=request.path)
        if self.auth is None:
            return None
        try:
            allowed, reason = await self.auth.authorize(user, attributes)
        except (PermissionError, OSError) as err:
            log.warning("authorization failed: %s", err)
            return _status_response(500, f"authorization failed: {err}")
        if allowed:
            return None
        log.debug("403 %s %s for %s: %s", request.method, request.path, user.name, reason)
        what = (
            (
                f'{attributes.resource}.{attributes.group} "{attributes.name}"'
                if attributes.name
                else f"{attributes.resource}.{attributes.group}"
            )
            if attributes.resource
            else f'path "{attributes.path}"'
        )
        scope = f' in the namespace "{attributes.namespace}"' if attributes.namespace else ""
        message = (
            f'{what} is forbidden: User "{user.name}" cannot {attributes.verb} '
            f"{'resource' if attributes.resource else 'path'}{scope}"
            + (f": {reason}" if reason else "")
        )
        return _status_response(403, message, "Forbidden")

    async def _serve(
        self,
        request: web.Request,
        core_request: Request,
        found: Route | Reply | None,
        custom: str,
        user: UserInfo | None,
    ) -> web.StreamResponse:
        accept = core_request.headers.get("accept", "")
        if found is None:
            return self._openapi(core_request.path)
        if isinstance(found, Reply):
            if core_request.path.rstrip("/") == "/apis" and "as=APIGroupDiscoveryList" in accept:
                return _json_response(200, self._aggregated_discovery(), _DISCOVERY_V2)
            return _json_response(found.code, found.body)
        if custom:
            return await self._custom(request, core_request, found, custom, user)
        served = self.resources[found.info.key]
        table = _table.wants_table(accept) and found.subresource == ""
        include = core_request.params.get("includeObject", "Metadata")
        answer = self.core.serve(found, core_request)
        if isinstance(answer, WatchStream):
            columns = served.printer_columns(found.version)
            return await self._stream(
                request,
                _lines(answer),
                "application/json",
                (lambda line: _table.table_event(line, columns, include)) if table else None,
            )
        if answer.content is not None:  # a watch's one-line 410
            from aiohttp import web

            return web.Response(
                status=answer.code,
                body=answer.content,
                headers={"Content-Type": "application/json"},
            )
        body = answer.body
        if table and answer.code == 200 and found.verb in ("get", "list"):
            columns = served.printer_columns(found.version)
            try:
                if found.verb == "list":
                    body = _table.table(
                        body["items"], columns, list_meta=body.get("metadata"), include=include
                    )
                else:
                    body = _table.table([body], columns, include=include)
            except ValueError as err:
                return _status_response(400, str(err), "BadRequest")
        return _json_response(answer.code, body, warnings=answer.warnings)

    async def _custom(
        self,
        request: web.Request,
        core_request: Request,
        found: Route,
        name: str,
        user: UserInfo | None,
    ) -> web.StreamResponse:
        served = self.resources[found.info.key]
        with self.core.lock:
            stored = self.core.store.get(found.info, found.namespace, str(found.name))
            obj = self.core.render(found.info, found.version, stored)
        sub_request = SubresourceRequest(
            method=core_request.method,
            version=found.version,
            namespace=found.namespace,
            name=str(found.name),
            object=obj,
            params=core_request.params,
            body=core_request.body,
            user=user,
        )
        result = await served.subresources[name](sub_request)
        if isinstance(result, Mapping):
            return _json_response(200, dict(result))
        return await self._stream(request, result, "text/plain", None)

    async def _stream(
        self,
        request: web.Request,
        chunks: AsyncIterator[bytes],
        content_type: str,
        transform: Callable[[bytes], bytes] | None,
    ) -> web.StreamResponse:
        from aiohttp import web

        response = web.StreamResponse(status=200, headers={"Content-Type": content_type})
        response.enable_chunked_encoding()
        await response.prepare(request)
        try:
            async for chunk in chunks:
                await response.write(transform(chunk) if transform is not None else chunk)
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            closer = getattr(chunks, "aclose", None)
            if closer is not None:
                with contextlib.suppress(Exception):
                    await closer()
        with contextlib.suppress(ConnectionResetError):
            await response.write_eof()
        return response

    # ------------------------------------------------------------------ documents

    def _group_versions(self) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for served in self.resources.values():
            for version in served.info.versions:
                if (served.info.group, version) not in out:
                    out.append((served.info.group, version))
        return out

    def _openapi(self, path: str) -> web.Response:
        infos = [s.info for s in self.resources.values()]
        if path == "/openapi/v2":
            return _json_response(200, _openapi.v2(infos, self.title))
        documents = {
            f"apis/{g}/{v}": _openapi.v3(infos, g, v, self.title) for g, v in self._group_versions()
        }
        if path.rstrip("/") == "/openapi/v3":
            return _json_response(200, _openapi.v3_index(documents))
        document = documents.get(path.removeprefix("/openapi/v3/"))
        if document is None:
            return _status_response(
                404, "the server could not find the requested resource", "NotFound"
            )
        return _json_response(200, document)

    def _aggregated_discovery(self) -> dict[str, Any]:
        """``/apis`` as an ``apidiscovery.k8s.io/v2`` ``APIGroupDiscoveryList``."""
        groups: dict[str, list[dict[str, Any]]] = {}
        for group, version in self._group_versions():
            legacy = self.core.route(Request("GET", f"/apis/{group}/{version}"))
            entries = legacy.body["resources"] if isinstance(legacy, Reply) else []
            resources: list[dict[str, Any]] = []
            for entry in entries:
                plural, _, sub = str(entry["name"]).partition("/")
                kind = {"group": group, "version": version, "kind": entry["kind"]}
                if sub:
                    parent = next(r for r in resources if r["resource"] == plural)
                    parent.setdefault("subresources", []).append(
                        {"subresource": sub, "responseKind": kind, "verbs": entry["verbs"]}
                    )
                    continue
                resource: dict[str, Any] = {
                    "resource": plural,
                    "responseKind": kind,
                    "scope": "Namespaced" if entry["namespaced"] else "Cluster",
                    "singularResource": entry.get("singularName", ""),
                    "verbs": entry["verbs"],
                }
                if entry.get("shortNames"):
                    resource["shortNames"] = entry["shortNames"]
                resources.append(resource)
            for served in self.resources.values():
                for sub in served.subresources:
                    owner = next(
                        (r for r in resources if r["resource"] == served.info.plural), None
                    )
                    if owner is not None:
                        owner.setdefault("subresources", []).append(
                            {"subresource": sub, "verbs": ["get"]}
                        )
            groups.setdefault(group, []).append(
                {"version": version, "resources": resources, "freshness": "Current"}
            )
        return {
            "kind": "APIGroupDiscoveryList",
            "apiVersion": "apidiscovery.k8s.io/v2",
            "metadata": {},
            "items": [
                {"metadata": {"name": group}, "versions": versions}
                for group, versions in groups.items()
            ],
        }


async def _lines(stream: WatchStream) -> AsyncIterator[bytes]:
    try:
        async for line in stream:
            yield line
    finally:
        await stream.aclose()
