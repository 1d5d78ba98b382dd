"""The HTTPS webhook server (controller-runtime's ``pkg/webhook/server.go`` and ``certwatcher``).

Served with aiohttp: a maintained asyncio HTTP/1.1 server (keep-alive, request size limits,
content negotiation) already installed with ``kubernetes``; the API server keeps connections to
webhooks alive, which the probe server's one-request-per-connection loop does not do.

The serving certificate is read from ``cert_dir`` and **reloaded when its files change**,
without a restart: each TLS handshake first looks at the files' modification time, size and
inode (two ``stat`` calls) and, when they changed, loads the new pair (a pair that does not load,
say mid-update, keeps the previous one and is retried on the next handshake). TLS 1.2 or newer.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import re
import ssl
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from kubectrl._internal.clock import Clock, RealClock
from kubectrl._internal.kinds import resolve_kind
from kubectrl.webhook._admission import (
    AdmissionHandler,
    AdmissionRequest,
    AdmissionResponse,
    DefaultingHandler,
    KindLike,
    ValidatingHandler,
)
from kubectrl.webhook._conversion import ConversionHandler
from kubectrl.webhook._metrics import WebhookMetrics

if TYPE_CHECKING:
    from aiohttp import web
    from prometheus_client import CollectorRegistry

__all__ = [
    "PROBE_MESSAGE",
    "PROBE_PATH",
    "WebhookRegistration",
    "WebhookServer",
    "WebhookServerOptions",
]

log = logging.getLogger("kubectrl.webhook")

#: Always served: an ``AdmissionReview`` answered ``allowed: false``, code 403, message
#: :data:`PROBE_MESSAGE`; a webhook configuration pointing there proves the API server really
#: calls this server (envtest waits for that).
PROBE_PATH = "/kubectrl-webhook-probe"
PROBE_MESSAGE = "kubectrl webhook probe"

#: The largest request body read (controller-runtime's 7 MiB: an object and its old version).
MAX_REQUEST_BYTES = 7 * 1024 * 1024

WebhookType = Literal["mutating", "validating", "conversion"]


@dataclasses.dataclass(frozen=True)
class WebhookServerOptions:
    """Where and how the webhook server listens (controller-runtime's ``webhook.Options``).

    - ``host`` ``""``: every interface; ``port`` 9443 (0 picks a free port).
    - ``cert_dir`` ``""``: ``<tempdir>/k8s-webhook-server/serving-certs``, holding ``cert_name``
      (``tls.crt``) and ``key_name`` (``tls.key``).
    - ``handler_timeout`` 10 s: a handler still running then is answered with a 500 error
      (the API server's default webhook timeout is 10 s too).

    Example::

        >>> WebhookServerOptions(port=0).cert_path().name
        'tls.crt'
    """

    host: str = ""
    port: int = 9443
    cert_dir: str = ""
    cert_name: str = "tls.crt"
    key_name: str = "tls.key"
    handler_timeout: float = 10.0

    def cert_directory(self) -> Path:
        """``cert_dir``, or the default directory when empty."""
        if self.cert_dir:
            return Path(self.cert_dir)
        return Path(tempfile.gettempdir()) / "k8s-webhook-server" / "serving-certs"

    def cert_path(self) -> Path:
        """The certificate file."""
        return self.cert_directory() / self.cert_name

    def key_path(self) -> Path:
        """The private key file."""
        return self.cert_directory() / self.key_name


@dataclasses.dataclass(frozen=True)
class WebhookRegistration:
    """One path the server answers, and what the manifests need to know about it.

    ``type`` is ``mutating``, ``validating`` or ``conversion``; ``group``/``version``/``kind``/
    ``plural`` name the kind (empty for a low-level handler registered without one; for a
    conversion, the hub's version);
    ``operations`` are the admission operations the webhook configuration lists; ``name`` is
    the webhook's name in it (empty: kubebuilder's ``m<kind>-<version>.kb.io`` /
    ``v<kind>-<version>.kb.io``; the ``name=`` of a ``+kubebuilder:webhook`` marker).
    """

    path: str
    type: WebhookType
    handler: Any
    group: str = ""
    version: str = ""
    kind: str = ""
    plural: str = ""
    operations: tuple[str, ...] = ()
    name: str = ""


_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def _check_webhook_name(name: str, path: str) -> None:
    """The API server's rule for a webhook's name: a DNS subdomain of at least three labels
    (k8s.io/kubernetes pkg/apis/admissionregistration/validation/validation.go checks each
    webhook's name with apimachinery's ``IsFullyQualifiedName``: "should be a domain with at
    least three segments separated by dots")."""
    labels = name.split(".")
    if (
        len(name) > 253
        or len(labels) < 3
        or not all(len(label) <= 63 and _DNS_LABEL.fullmatch(label) for label in labels)
    ):
        raise ValueError(
            f"webhook at {path}: name {name!r} must be a lowercase DNS subdomain with at least "
            "three labels, such as vfoo-delete.example.com (the API server refuses others)"
        )


class _CertWatcher:
    """Holds the serving context; reloads the pair when the files change (``certwatcher``)."""

    def __init__(self, cert: Path, key: Path) -> None:
        self.cert = cert
        self.key = key
        self._signature: tuple[Any, ...] | None = None
        self._failed: tuple[Any, ...] | None = None
        self.context = self._load()
        self._signature = self._stat()
        self.listening = self._new_context()
        self.listening.load_cert_chain(self.cert, self.key)
        self.listening.sni_callback = self._on_hello

    def _stat(self) -> tuple[Any, ...]:
        sig: list[Any] = []
        for path in (self.cert, self.key):
            st = os.stat(path)
            sig.extend((st.st_mtime_ns, st.st_size, st.st_ino))
        return tuple(sig)

    @staticmethod
    def _new_context() -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        return context

    def _load(self) -> ssl.SSLContext:
        context = self._new_context()
        context.load_cert_chain(self.cert, self.key)
        return context

    def reload_if_changed(self) -> bool:
        """Load the files again if they changed; ``True`` when a new pair is now served."""
        try:
            signature = self._stat()
        except OSError:
            return False  # being replaced: keep serving the previous pair
        if signature == self._signature or signature == self._failed:
            return False
        try:
            context = self._load()
        except (OSError, ssl.SSLError, ValueError) as err:
            self._failed = signature
            log.warning(
                "cannot load the webhook serving certificate %s / %s, keeping the previous one: %s",
                self.cert,
                self.key,
                err,
                extra={"cert": str(self.cert), "key": str(self.key), "error": str(err)},
            )
            return False
        self.context = context
        self._signature = signature
        self._failed = None
        log.info("webhook serving certificate reloaded", extra={"cert": str(self.cert)})
        return True

    def _on_hello(self, sock: Any, server_name: str | None, _context: ssl.SSLContext) -> None:
        try:
            self.reload_if_changed()
            sock.context = self.context
        except Exception:  # never fail a handshake over a reload
            log.exception("webhook certificate reload failed")


class WebhookServer:
    """Serves admission and conversion webhooks over HTTPS (controller-runtime's ``Server``).

    :meth:`register` a handler at a path (an :class:`~kubectrl.webhook.AdmissionHandler`, a
    :class:`~kubectrl.webhook.DefaultingHandler`, :class:`~kubectrl.webhook.ValidatingHandler`
    or :class:`~kubectrl.webhook.ConversionHandler`); paths may be registered after the start.
    :data:`PROBE_PATH` is always served.

    Guarantees: a malformed ``AdmissionReview`` (not JSON, wrong content type, no ``request``)
    is answered as controller-runtime does: HTTP 200 with an ``AdmissionReview`` whose response
    is ``allowed: false`` with code 400 and the reason; a malformed ``ConversionReview`` gets
    HTTP 400. A handler that raises or runs past ``handler_timeout`` is answered with a 500
    error naming it and logged with the kind, namespace/name and uid; the server keeps serving.
    With a Prometheus ``registry`` (the Manager gives its own), requests are counted under
    controller-runtime's ``controller_runtime_webhook_*`` names, labelled by path.
    ``handler_timeout`` is measured on ``clock`` (the machine's by default; the Manager's own).

    Example::

        server = WebhookServer(WebhookServerOptions(port=0, cert_dir="/certs"))
        server.register("/validate-foo", ValidatingHandler(Foo, FooValidator()))
        async with server:
            print(server.port)
    """

    def __init__(
        self,
        options: WebhookServerOptions | None = None,
        *,
        registry: CollectorRegistry | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.options = options if options is not None else WebhookServerOptions()
        self._clock: Clock = clock if clock is not None else RealClock()
        self._metrics = WebhookMetrics(registry)
        self._registrations: dict[str, WebhookRegistration] = {}
        self._runner: web.AppRunner | None = None
        self._port: int | None = None
        self._certs: _CertWatcher | None = None

    # ------------------------------------------------------------------ registration

    @property
    def registrations(self) -> list[WebhookRegistration]:
        """What is registered, in registration order (the probe path is not listed).

        A conversion path is listed once per kind its :class:`ConversionHandler` converts,
        each naming the kind's group, hub version, kind and plural (what the CRD manifests
        need to say ``strategy: Webhook``); a handler with no kind yet is listed once, unnamed.
        """
        out: list[WebhookRegistration] = []
        for registration in self._registrations.values():
            handler = registration.handler
            hubs = handler.hubs if isinstance(handler, ConversionHandler) else []
            if not hubs:
                out.append(registration)
                continue
            out.extend(
                dataclasses.replace(
                    registration,
                    group=info.group,
                    version=info.version,
                    kind=info.kind,
                    plural=info.plural,
                )
                for info in hubs
            )
        return out

    def register(
        self,
        path: str,
        handler: AdmissionHandler | ConversionHandler,
        *,
        type: WebhookType | None = None,
        kind: KindLike | None = None,
        operations: Sequence[str] | None = None,
        name: str = "",
    ) -> WebhookRegistration:
        """Serve ``handler`` at ``path`` (``ValueError`` if the path is taken).

        ``type``, ``kind`` and ``operations`` describe the webhook for
        :func:`~kubectrl.webhook.webhook_configurations`; they are read from a
        :class:`DefaultingHandler` (mutating, CREATE and UPDATE) or :class:`ValidatingHandler`
        (validating, its ``operations``) and must be given for another admission handler to
        appear in the manifests. ``name`` is the webhook's name in its configuration (the
        ``name=`` of a ``+kubebuilder:webhook`` marker, a fully qualified name such as
        ``vfoo-delete.example.com``); the default is kubebuilder's ``v<kind>-<version>.kb.io``,
        so a second webhook for the same kind and version needs a name of its own.

        Example::

            >>> from kubectrl.webhook import ValidatingHandler
            >>> class Check:
            ...     def validate_create(self, obj: dict) -> None: ...
            ...     def validate_update(self, old: dict, new: dict) -> None: ...
            ...     def validate_delete(self, obj: dict) -> None: ...
            >>> server = WebhookServer()
            >>> server.register("/validate-delete-foo",
            ...     ValidatingHandler(("example.com/v1", "Foo"), Check(), delete=True),
            ...     operations=("DELETE",), name="vfoo-delete.example.com").name
            'vfoo-delete.example.com'
        """
        if not path.startswith("/") or path == PROBE_PATH:
            raise ValueError(f"webhook path must start with '/' and not be {PROBE_PATH}: {path!r}")
        if path in self._registrations:
            raise ValueError(f"a webhook is already registered at {path}")
        if name and not isinstance(handler, ConversionHandler):
            _check_webhook_name(name, path)
        if isinstance(handler, ConversionHandler):
            if name:
                raise ValueError(
                    f"webhook at {path}: a conversion webhook has no name (the CRD's "
                    "spec.conversion names the service); leave name= out"
                )
            registration = WebhookRegistration(path, "conversion", handler)
        else:
            if not callable(getattr(handler, "handle", None)):
                raise TypeError(
                    f"{handler!r} is neither an AdmissionHandler (async handle(request)) nor a "
                    "ConversionHandler"
                )
            default_type: WebhookType = "validating"
            default_ops: tuple[str, ...] = ("CREATE", "UPDATE")
            info = None
            if isinstance(handler, (DefaultingHandler, ValidatingHandler)):
                info = handler.kind_info
                default_ops = handler.operations
                if isinstance(handler, DefaultingHandler):
                    default_type = "mutating"
            if kind is not None:
                info = resolve_kind(kind)[0]
            registration = WebhookRegistration(
                path,
                type or default_type,
                handler,
                group=info.group if info else "",
                version=info.version if info else "",
                kind=info.kind if info else "",
                plural=info.plural if info else "",
                operations=tuple(operations) if operations is not None else default_ops,
                name=name,
            )
        self._registrations[path] = registration
        log.info(
            "registering webhook",
            extra={"path": path, "type": registration.type, "kind": registration.kind},
        )
        return registration

    def conversion_handler(self, path: str = "/convert") -> ConversionHandler:
        """The :class:`ConversionHandler` at ``path``, registered now if there is none."""
        existing = self._registrations.get(path)
        if existing is None:
            handler = ConversionHandler()
            self.register(path, handler)
            return handler
        if not isinstance(existing.handler, ConversionHandler):
            raise ValueError(f"{path} already serves {existing.handler!r}, not conversions")
        return existing.handler

    # ------------------------------------------------------------------ lifecycle

    @property
    def port(self) -> int:
        """The bound port once started (the configured one before)."""
        return self._port if self._port is not None else self.options.port

    @property
    def serving(self) -> bool:
        """Whether the server is listening."""
        return self._runner is not None

    def reload_certificates(self) -> bool:
        """Look at the certificate files now; ``True`` when a new pair was loaded.

        Handshakes do this by themselves; this is for callers that want to know.
        """
        return self._certs.reload_if_changed() if self._certs is not None else False

    async def start(self) -> None:
        """Load the certificate and listen; returns once serving (no-op when serving).

        ``FileNotFoundError`` names the missing certificate or key file.
        """
        if self._runner is not None:
            return
        from aiohttp import web

        cert, key = self.options.cert_path(), self.options.key_path()
        for path in (cert, key):
            if not path.is_file():
                raise FileNotFoundError(
                    f"webhook server: no {path.name} in {path.parent} (cert_dir); put the serving "
                    "certificate and key there (cert-manager, or envtest's generated pair)"
                )
        self._certs = certs = _CertWatcher(cert, key)
        app = web.Application(client_max_size=MAX_REQUEST_BYTES)
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        port = self.options.port
        for _ in range(5):
            runner = await self._listen(app, port, certs)
            ports = {int(address[1]) for address in runner.addresses}
            if len(ports) <= 1 or self.options.port != 0:
                break
            # Port 0 on every interface binds one socket per address family, each on a port of
            # its own: listen again on one port for all (the first), as Go's dual-stack does.
            await runner.cleanup()
            port = min(ports)
        self._runner = runner
        self._port = min(ports) if ports else self.options.port
        log.info(
            "Serving webhook server",
            extra={"host": self.options.host or "*", "port": self._port, "cert": str(cert)},
        )

    async def _listen(self, app: web.Application, port: int, certs: _CertWatcher) -> web.AppRunner:
        from aiohttp import web

        # In-flight requests get up to a handler's timeout to be answered on stop.
        runner = web.AppRunner(
            app,
            access_log=None,
            handle_signals=False,
            shutdown_timeout=self.options.handler_timeout,
        )
        await runner.setup()
        site = web.TCPSite(runner, self.options.host or None, port, ssl_context=certs.listening)
        try:
            await site.start()
        except OSError as err:
            await runner.cleanup()
            address = f"{self.options.host or '*'}:{port}"
            raise OSError(err.errno, f"webhook server cannot listen on {address}: {err}") from err
        except BaseException:
            await runner.cleanup()
            raise
        return runner

    async def stop(self) -> None:
        """Stop listening and close connections."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()
            log.info("webhook server stopped", extra={"port": self._port})

    async def __aenter__(self) -> WebhookServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def check_serving(self) -> None:
        """A readiness check: raises unless serving (the Manager's ``webhook`` check)."""
        if self._runner is None:
            raise RuntimeError("webhook server is not serving")

    # ------------------------------------------------------------------ HTTP

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        path = request.path
        registration = self._registrations.get(path)
        if path != PROBE_PATH and registration is None:
            return web.Response(status=404, text=f"no webhook at {path}\n")
        if request.method != "POST":
            return web.Response(status=405, text="webhooks answer POST only\n")
        loop = asyncio.get_running_loop()
        began = loop.time()
        self._metrics.started(path)
        code = 500
        try:
            if registration is not None and registration.type == "conversion":
                response = await self._convert(request, registration.handler)
            else:
                response = await self._admit(request, registration)
            code = response.status
            return response
        finally:
            self._metrics.finished(path, code, loop.time() - began)

    async def _admit(
        self, request: web.Request, registration: WebhookRegistration | None
    ) -> web.StreamResponse:
        from aiohttp import web

        api_version = "admission.k8s.io/v1"
        path = request.path

        def answer(response: AdmissionResponse) -> web.Response:
            review = {"apiVersion": api_version, "kind": "AdmissionReview"}
            review["response"] = response.to_dict()  # type: ignore[assignment]
            return web.json_response(review)

        def bad(message: str) -> web.Response:
            log.info(
                "bad admission request on %s: %s",
                path,
                message,
                extra={"path": path, "error": message},
            )
            return answer(AdmissionResponse.errored(400, message))

        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return bad(f"request body larger than {MAX_REQUEST_BYTES} bytes")
        if not body:
            return bad("request body is empty")
        if request.content_type != "application/json":
            return bad(f"contentType={request.content_type}, expected application/json")
        try:
            review = json.loads(body)
        except (ValueError, UnicodeDecodeError) as err:
            return bad(f"cannot decode the AdmissionReview: {err}")
        if not isinstance(review, dict):
            return bad("the AdmissionReview is not a JSON object")
        if isinstance(review.get("apiVersion"), str) and review["apiVersion"]:
            api_version = review["apiVersion"]
        raw_request = review.get("request")
        if raw_request is None:
            return bad("the AdmissionReview has no request")
        try:
            req = AdmissionRequest.from_dict(raw_request)
        except ValueError as err:
            return bad(f"malformed AdmissionReview request: {err}")
        if registration is None:  # the probe
            response = AdmissionResponse.denied(PROBE_MESSAGE)
        else:
            response = await self._run(registration, req)
        response.uid = req.uid
        return answer(response)

    async def _run(
        self, registration: WebhookRegistration, req: AdmissionRequest
    ) -> AdmissionResponse:
        handler = registration.handler
        name = repr(handler)
        extra = {"path": registration.path, "kind": req.kind.kind, "object": req.object_name}
        extra["uid"] = req.uid
        timeout = self.options.handler_timeout
        try:
            response = await self._within_timeout(handler.handle(req), timeout)
        except asyncio.TimeoutError:
            message = f"webhook {name} at {registration.path} timed out after {timeout:g} s"
            log.error(
                "%s (kind %s, object %s, uid %s)",
                message,
                req.kind.kind,
                req.object_name,
                req.uid,
                extra=extra,
            )
            return AdmissionResponse.errored(500, message)
        except Exception as err:
            message = f"webhook {name} at {registration.path} failed: {type(err).__name__}: {err}"
            log.error(
                "%s (kind %s, object %s, uid %s)",
                message,
                req.kind.kind,
                req.object_name,
                req.uid,
                extra=extra,
                exc_info=True,
            )
            return AdmissionResponse.errored(500, message)
        if not isinstance(response, AdmissionResponse):
            message = f"webhook {name} returned {type(response).__name__}, not an AdmissionResponse"
            log.error(message, extra=extra)
            return AdmissionResponse.errored(500, message)
        if not response.is_allowed and response.code < 500:
            log.info(
                "admission denied: %s (kind %s, object %s, uid %s)",
                response.message,
                req.kind.kind,
                req.object_name,
                req.uid,
                extra={**extra, "code": response.code},
            )
        return response

    async def _within_timeout(self, coro: Any, timeout: float) -> Any:
        """``asyncio.wait_for`` on the server's clock."""
        task = asyncio.ensure_future(coro)
        timer = asyncio.ensure_future(self._clock.sleep(timeout))
        try:
            await asyncio.wait({task, timer}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            timer.cancel()
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            raise asyncio.TimeoutError
        return task.result()

    async def _convert(
        self, request: web.Request, handler: ConversionHandler
    ) -> web.StreamResponse:
        from aiohttp import web

        try:
            body = await request.read()
            review = json.loads(body)
            answer = handler.review(review)
        except web.HTTPRequestEntityTooLarge:
            raise
        except (ValueError, UnicodeDecodeError, AttributeError) as err:
            message = f"malformed ConversionReview: {err}"
            log.info(message, extra={"path": request.path, "error": str(err)})
            return web.Response(status=400, text=message + "\n")
        return web.json_response(answer)

    def __repr__(self) -> str:
        return f"<WebhookServer port={self.port} paths={sorted(self._registrations)}>"
