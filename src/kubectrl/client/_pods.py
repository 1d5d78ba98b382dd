"""The pod verbs, in one place: ``client.pods`` (:class:`Pods`; the blocking client's is
:class:`~kubectrl.client.BlockingPods`).

kube-rs keeps a pod's subresources on ``Api<Pod>`` (``logs``, ``log_stream``, ``exec``,
``attach``, ``portforward``, ``evict``: kube-client/src/api/subresource.rs); client-go spreads
them over ``Pods(ns).GetLogs``, ``EvictV1``, ``ProxyGet``, ``UpdateEphemeralContainers`` and the
``remotecommand`` and ``portforward`` packages. Here they are the methods of one object:

================================== =====================================================
call                               request
================================== =====================================================
``log(pod, ...)``                  ``GET pods/log``: the whole log, as text (``str``), or as
                                   bytes with ``encoding=None``
``log_stream(pod, ...)``           ``GET pods/log?follow=true``: the lines as they come
``exec(pod, command, ...)``        WebSocket ``pods/exec``, run to its end
``open_exec(pod, command, ...)``   WebSocket ``pods/exec``, a live session
``attach(pod, ...)``               WebSocket ``pods/attach``
``port_forward(pod, port, ...)``   WebSocket ``pods/portforward``
``evict(pod, ...)``                ``POST pods/eviction`` (``policy/v1``)
``add_ephemeral_container(...)``   ``PATCH pods/ephemeralcontainers``
``proxy(pod, path, ...)``          ``pods/proxy``: an HTTP request relayed to the pod
================================== =====================================================

A :class:`Pods` reaches its client through one small protocol declared here,
:class:`ClientCore`: the client's ``config`` and its two request methods (``_send``, one
bounded request; ``_open_stream``, a long-lived GET). mypy checks that
:class:`~kubectrl.client.AsyncClient` fits it where ``client.pods`` builds its :class:`Pods`.

The clients' former pod methods (``client.pod_log``, ``client.exec``, ...) are gone;
:class:`MovedPodVerbs`, a base class of both clients, makes reading one raise an
``AttributeError`` that names its new call.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, overload

import httpx
from typing_extensions import Unpack

from kubectrl.client._body import json_body
from kubectrl.client._documented import documented_by
from kubectrl.client._models import to_dict
from kubectrl.client._paths import namespaced_path, pod_path
from kubectrl.client._pod_logs import (
    LogOptions,
    LogStreamOptions,
    check_encoding,
    check_log_options,
    log_params,
    split_lines,
    text_line,
)
from kubectrl.client._remotecommand import ExecResult, SessionOpener, open_stream, run_to_end
from kubectrl.client._rest_extras import ClientCore, send_proxy
from kubectrl.client._types import PatchType
from kubectrl.client._websocket import WebSocket, WebSocketRefusedError, open_websocket
from kubectrl.errors import APIConnectionError, APIError, InvalidPathSegmentError

if TYPE_CHECKING:
    from kubectrl.client._portforward import PortForward

__all__ = [
    "MOVED_TO_PODS",
    "ClientCore",
    "MovedPodVerbs",
    "PodLogCalls",
    "PodRef",
    "Pods",
    "pod_target",
]

#: A pod named by its name (with ``namespace=``), or the pod object itself (a dict or model).
PodRef = Any


def pod_target(pod: PodRef, namespace: str | None, default_namespace: str) -> tuple[str, str]:
    """``(namespace, name)`` of a pod given by name or as an object (dict or model).

    An explicit ``namespace`` wins over the object's; a name alone takes ``default_namespace``.
    Raises :class:`~kubectrl.errors.InvalidPathSegmentError` (a ``ValueError``) for an empty
    name or an object without ``metadata.name``, and ``TypeError`` for anything else. The
    verbs check the name and namespace further when they build their path.

    Example::

        >>> pod_target({"metadata": {"name": "web", "namespace": "ns"}}, None, "default")
        ('ns', 'web')
    """
    if isinstance(pod, str):
        if not pod:
            raise InvalidPathSegmentError("name", pod, ["may not be empty"], resource="pods")
        return namespace or default_namespace, pod
    if isinstance(pod, Mapping) or hasattr(pod, "to_dict") or hasattr(pod, "model_dump"):
        body = to_dict(pod)
        meta = body.get("metadata") or {}
        name = meta.get("name")
        if not name:
            raise InvalidPathSegmentError(
                "name",
                name,
                ["may not be empty (the pod object has no metadata.name)"],
                resource="pods",
            )
        return namespace or meta.get("namespace") or default_namespace, str(name)
    raise TypeError(f"a pod is a name or a Pod object, not {type(pod).__name__} ({pod!r})")


class PodLogCalls(Protocol):
    """The typed signatures of the two log calls: text (``str``) with an ``encoding``, the
    bytes the container wrote with ``encoding=None``. :class:`Pods` binds its implementations
    to these names; mypy checks them against these overloads."""

    @overload
    async def log(
        self, pod: PodRef, *, encoding: str = "utf-8", **options: Unpack[LogOptions]
    ) -> str: ...
    @overload
    async def log(self, pod: PodRef, *, encoding: None, **options: Unpack[LogOptions]) -> bytes: ...
    async def log(
        self, pod: PodRef, *, encoding: str | None = "utf-8", **options: Unpack[LogOptions]
    ) -> str | bytes:
        """Read a pod's log (``pods/log``) whole, without following: text decoded with
        ``encoding`` (UTF-8 by default; undecodable bytes replaced), or with
        ``encoding=None`` the bytes the container wrote (``kubectl logs`` output).

        ``pod`` is a name (``namespace=`` or the config's namespace) or a Pod object. The
        options (:class:`~kubectrl.client.LogOptions`, ``PodLogOptions``):
        ``namespace``, ``container``, ``tail_lines``, ``since_seconds`` or ``since_time`` (an
        aware datetime or an RFC 3339 string, not both), ``timestamps``, ``previous``,
        ``limit_bytes``, ``insecure_skip_tls_verify_backend`` (the apiserver does not verify
        the kubelet's serving certificate). An unknown option is a ``TypeError``, an option
        the server would refuse a ``ValueError``, both before anything is sent. A pod that
        does not exist is a :class:`~kubectrl.errors.NotFoundError`; a container the pod does
        not have, or one not started yet, a :class:`~kubectrl.errors.BadRequestError` whose
        message names both.

        Example::

            text = await client.pods.log("web-0", namespace="ns", tail_lines=100)
            raw = await client.pods.log("web-0", namespace="ns", encoding=None)
        """

    @overload
    def log_stream(
        self, pod: PodRef, *, encoding: str = "utf-8", **options: Unpack[LogStreamOptions]
    ) -> AsyncIterator[str]: ...
    @overload
    def log_stream(
        self, pod: PodRef, *, encoding: None, **options: Unpack[LogStreamOptions]
    ) -> AsyncIterator[bytes]: ...
    def log_stream(
        self,
        pod: PodRef,
        *,
        encoding: str | None = "utf-8",
        **options: Unpack[LogStreamOptions],
    ) -> AsyncIterator[str] | AsyncIterator[bytes]:
        """Follow a pod's log (``pods/log?follow=true``), yielding each line as it arrives:
        as text without its line end (``\\n`` or ``\\r\\n``; decoded with ``encoding``,
        undecodable bytes replaced), or with ``encoding=None`` as the bytes with their
        ``\\n``. When the stream ends mid-line (the container stopped, the server closed) the
        partial last line comes too, without a line end.

        Ends when the server ends the stream; stopping the iteration (``break``, cancellation,
        ``aclose()``) closes the connection. A connection cut mid-stream raises
        :class:`~kubectrl.errors.APIConnectionError` naming the pod, ``pods/log`` and the
        cause. Uses the watch pool (no read timeout); opening it is bounded and not retried,
        as a watch. The options are :meth:`log`'s but ``limit_bytes``
        (:class:`~kubectrl.client.LogStreamOptions`); an ``encoding`` that does not
        write a line end as the byte ``\\n`` (UTF-16) is a ``ValueError``.

        Example::

            async for line in client.pods.log_stream("web-0", namespace="ns"):
                print(line)
        """


class Pods:
    """The pod verbs of a client (``client.pods``): logs, exec, attach, port-forward,
    eviction, ephemeral containers and the pod proxy.

    ``pod`` is, in every call, a name (with ``namespace=``, or the client config's namespace)
    or the Pod object itself (a dict or a ``V1Pod``). Names, namespaces and containers are
    checked before anything is sent
    (:class:`~kubectrl.errors.InvalidPathSegmentError`); the server's refusals are the typed
    errors of :mod:`kubectrl.errors`, naming the pod and the subresource.

    Example::

        text = await client.pods.log("web-0", namespace="ns", tail_lines=100)
        result = await client.pods.exec("web-0", ["cat", "/etc/hostname"], namespace="ns")
    """

    __slots__ = ("_client",)

    def __init__(self, client: ClientCore) -> None:
        self._client = client

    def __repr__(self) -> str:
        return f"Pods({self._client!r})"

    def _pod(self, pod: PodRef, namespace: str | None) -> tuple[str, str]:
        return pod_target(pod, namespace, self._client.config.namespace)

    # ------------------------------------------------------------------ logs

    @documented_by(PodLogCalls.log)
    async def _log(
        self, pod: PodRef, *, encoding: str | None = "utf-8", **options: Unpack[LogOptions]
    ) -> Any:
        check_log_options("log", options, stream=False)
        check_encoding(encoding, lines=False)
        ns, name = self._pod(pod, options.get("namespace"))
        path = pod_path(ns, name, "log", verb="get")
        response = await self._client._send(
            "GET",
            path,
            verb="get",
            label="pods/log",
            namespace=ns,
            name=name,
            params=log_params(options, follow=False),
            accept="*/*",
        )
        if encoding is None:
            return response.content
        return response.content.decode(encoding, errors="replace")

    @documented_by(PodLogCalls.log_stream)
    async def _log_stream(
        self,
        pod: PodRef,
        *,
        encoding: str | None = "utf-8",
        **options: Unpack[LogStreamOptions],
    ) -> AsyncIterator[Any]:
        check_log_options("log_stream", options, stream=True)
        check_encoding(encoding, lines=True)
        ns, name = self._pod(pod, options.get("namespace"))
        path = pod_path(ns, name, "log", verb="get")
        response = await self._client._open_stream(
            path,
            log_params(options, follow=True),
            verb="get",
            label="pods/log",
            namespace=ns,
            name=name,
            read_timeout=None,
            accept="*/*",
        )
        try:
            async for line in split_lines(response.aiter_bytes()):
                yield line if encoding is None else text_line(line, encoding)
        except httpx.TransportError as err:
            container = options.get("container")
            what = f"pods/log {ns}/{name}" + (f" (container {container})" if container else "")
            raise APIConnectionError(
                f"the log stream of {what} broke off: {type(err).__name__}: {err}",
                verb="get",
                resource=what,
            ) from err
        finally:
            await response.aclose()

    # The two log calls' public signatures are PodLogCalls' overloads (str, or bytes with
    # encoding=None); the implementations above are bound to those names at run time, and mypy
    # checks them against the overloads (_PodsConforms below).
    if TYPE_CHECKING:
        log = PodLogCalls.log
        log_stream = PodLogCalls.log_stream
    else:
        log = _log
        log_stream = _log_stream

    # ------------------------------------------------------------------ exec, attach

    async def _stream_refused(
        self,
        path: str,
        query: list[tuple[str, str]],
        subresource: str,
        namespace: str,
        name: str,
        refused: WebSocketRefusedError,
    ) -> None:
        # The upgrade's error body is not kept by the WebSocket client: the same request
        # without the upgrade gets the server's Status (it fails the same way before it would
        # ask for the upgrade: authorization, the pod and the container are checked first).
        try:
            await self._client._send(
                "GET",
                path + "?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote),
                verb=subresource,
                label=f"pods/{subresource}",
                namespace=namespace,
                name=name,
                accept="*/*",
            )
        except APIError as err:
            if err.code == refused.status:
                raise

    def open_exec(
        self,
        pod: PodRef,
        command: Sequence[str],
        *,
        namespace: str | None = None,
        container: str | None = None,
        stdin: bool = False,
        stdout: bool = True,
        stderr: bool = True,
        tty: bool = False,
    ) -> SessionOpener:
        """Start ``command`` in a pod's container (``pods/exec``): ``await`` the result for the
        live :class:`~kubectrl.client.ExecSession` (stdin, stdout/stderr readers, resize, exit
        code), or use it as ``async with`` to close the session on leaving.

        ``pod`` is a name (``namespace=`` or the config's namespace) or a Pod object. Without
        ``container`` the server picks the pod's only (or default) container.

        Example::

            async with client.pods.open_exec("web-0", ["sh"], namespace="ns", stdin=True) as s:
                await s.write(b"echo hi; exit 3\\n")
                assert await s.stdout.readline() == b"hi\\n"
                assert await s.wait() == 3
        """
        ns, name = self._pod(pod, namespace)
        config = self._client.config
        return SessionOpener(
            lambda: open_stream(
                config,
                self._stream_refused,
                subresource="exec",
                namespace=ns,
                name=name,
                command=command,
                container=container,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                tty=tty,
            ),
            f"pods/exec {ns}/{name}",
        )

    async def exec(
        self,
        pod: PodRef,
        command: Sequence[str],
        *,
        namespace: str | None = None,
        container: str | None = None,
        stdin: bytes | None = None,
        tty: bool = False,
    ) -> ExecResult:
        """Run ``command`` in a pod's container to its end: its stdout, stderr and exit code.

        ``stdin`` bytes are sent to the command and then closed (closing needs the server's
        ``v5.channel.k8s.io``; with v4 the command must stop reading by itself). A non-zero
        exit is a result, not an error; a command the server cannot run, a pod or container
        that does not exist, a refusal (RBAC) raise the typed
        :class:`~kubectrl.errors.APIError` naming the pod and ``pods/exec``.

        Example::

            result = await client.pods.exec("db-0", ["pg_dump", "app"], namespace="ns")
            dump = result.stdout
        """
        session = await self.open_exec(
            pod,
            command,
            namespace=namespace,
            container=container,
            stdin=stdin is not None,
            tty=tty,
        )
        return await run_to_end(session, stdin)

    def attach(
        self,
        pod: PodRef,
        *,
        namespace: str | None = None,
        container: str | None = None,
        stdin: bool = False,
        stdout: bool = True,
        stderr: bool = True,
        tty: bool = False,
    ) -> SessionOpener:
        """Attach to the running process of a pod's container (``pods/attach``); ``await`` the
        result or use it as ``async with``, as :meth:`open_exec`.

        Example::

            async with client.pods.attach("web-0", namespace="ns") as session:
                first = await session.stdout.readline()
        """
        ns, name = self._pod(pod, namespace)
        config = self._client.config
        return SessionOpener(
            lambda: open_stream(
                config,
                self._stream_refused,
                subresource="attach",
                namespace=ns,
                name=name,
                command=None,
                container=container,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                tty=tty,
            ),
            f"pods/attach {ns}/{name}",
        )

    # ------------------------------------------------------------------ port-forward

    def port_forward(
        self,
        pod: PodRef,
        remote_port: int,
        *,
        namespace: str | None = None,
        local_host: str = "127.0.0.1",
        local_port: int = 0,
    ) -> PortForward:
        """Forward ``local_host:local_port`` (0: any free port) to the pod's ``remote_port``
        (``pods/portforward``); use the result as an async context manager.

        Example::

            async with client.pods.port_forward("web-0", 8080, namespace="ns") as forward:
                reader, writer = await asyncio.open_connection(*forward.address)
        """
        from kubectrl.client._portforward import PORTFORWARD_PROTOCOLS, PortForward

        ns, name = self._pod(pod, namespace)
        path = pod_path(ns, name, "portforward", verb="portforward")
        what = f"pods/portforward {ns}/{name}"
        config = self._client.config

        async def opener(port: int) -> WebSocket:
            query = [("ports", str(port))]
            try:
                return await open_websocket(config, path, query, PORTFORWARD_PROTOCOLS, what=what)
            except WebSocketRefusedError as err:
                await self._stream_refused(path, query, "portforward", ns, name, err)
                raise APIError(
                    f"the server refused the WebSocket upgrade: HTTP {err.status}",
                    code=err.status,
                    verb="portforward",
                    resource="pods/portforward",
                    namespace=ns,
                    name=name,
                ) from err

        return PortForward(
            opener,
            what=what,
            remote_port=remote_port,
            local_host=local_host,
            local_port=local_port,
        )

    # ------------------------------------------------------------------ eviction

    async def evict(
        self,
        pod: PodRef,
        *,
        namespace: str | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Evict a pod (``policy/v1`` Eviction): delete it if its PodDisruptionBudgets allow.

        A budget that allows no disruption answers 429: it is raised at once (not retried) as
        :class:`~kubectrl.errors.TooManyRequestsError` with the server's message; retry later,
        as ``kubectl drain`` does. Returns the server's answer (a Status).

        Example::

            try:
                await client.pods.evict("web-0", namespace="ns")
            except TooManyRequestsError as err:
                print("blocked by a PodDisruptionBudget:", err.server_message)
        """
        ns, name = self._pod(pod, namespace)
        options: dict[str, Any] = {}
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        if dry_run:
            options["dryRun"] = ["All"]
        body: dict[str, Any] = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": ns},
        }
        if options:
            body["deleteOptions"] = options
        path = pod_path(ns, name, "eviction", verb="create")
        # one attempt: a 429 from a PodDisruptionBudget is the caller's to wait out
        response = await self._client._send(
            "POST",
            path,
            verb="create",
            label="pods/eviction",
            namespace=ns,
            name=name,
            body=body,
            retry=False,
        )
        data = json_body(response, verb="create", resource="pods/eviction")
        return data if isinstance(data, dict) else {}

    # ------------------------------------------------------------------ ephemeral containers

    async def add_ephemeral_container(
        self,
        pod: PodRef,
        container: Mapping[str, Any] | Any,
        *,
        namespace: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Add an ephemeral container to a running pod (the ``pods/ephemeralcontainers``
        subresource, a strategic merge patch as ``kubectl debug`` sends); returns the pod.

        ``container`` is an ``EphemeralContainer`` (a dict or a model): at least ``name`` and
        ``image``; ``targetContainerName`` shares that container's process namespace. Its name
        must be new in the pod (an existing ephemeral container cannot be changed or removed).

        Example::

            pod = await client.pods.add_ephemeral_container(
                "web-0", {"name": "debug", "image": "busybox", "stdin": True, "tty": True,
                          "targetContainerName": "app"}, namespace="ns")
        """
        ns, name = self._pod(pod, namespace)
        path = namespaced_path("pods", ns, name, "ephemeralcontainers", verb="patch")
        body = to_dict(container)
        if not body.get("name"):
            raise ValueError(f"the ephemeral container for pod {ns}/{name} needs a name")
        response = await self._client._send(
            "PATCH",
            path,
            verb="patch",
            label="pods/ephemeralcontainers",
            namespace=ns,
            name=name,
            params={"dryRun": "All" if dry_run else None},
            body={"spec": {"ephemeralContainers": [body]}},
            content_type=PatchType.STRATEGIC.value,
        )
        result = json_body(response, verb="patch", resource="pods/ephemeralcontainers")
        return result if isinstance(result, dict) else {}

    # ------------------------------------------------------------------ proxy

    async def proxy(
        self,
        pod: PodRef,
        path: str = "",
        *,
        namespace: str | None = None,
        port: int | str | None = None,
        scheme: str | None = None,
        method: str = "GET",
        params: Mapping[str, str] | None = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """Send an HTTP request to a pod's port through the apiserver (``pods/proxy``) and
        return the response as it came: whatever its status, since it may be the pod's own
        answer (a 404 of the application's) or the apiserver's (a ``Status``: the pod does not
        exist). ``port`` is the container port's number or name, ``scheme`` ``"http"``
        (default) or ``"https"``; ``path`` may not climb out of the proxy (``..``). Raises
        :class:`~kubectrl.errors.APIConnectionError` when the apiserver cannot be reached.
        The services' twin is the client's ``proxy_service``.

        Example::

            response = await client.pods.proxy("web-0", "/metrics", namespace="ns", port=8080)
        """
        ns, name = self._pod(pod, namespace)
        return await send_proxy(
            self._client,
            "pods",
            name,
            path,
            namespace=ns,
            port=port,
            scheme=scheme,
            method=method,
            params=params,
            content=content,
            headers=headers,
        )


#: The clients' former pod methods, and the call each became (``client.`` + it).
MOVED_TO_PODS: dict[str, str] = {
    "pod_log": "pods.log(...)",
    "pod_log_bytes": "pods.log(..., encoding=None)",
    "follow_pod_log": "pods.log_stream(...)",
    "follow_pod_log_bytes": "pods.log_stream(..., encoding=None)",
    "exec": "pods.exec(...)",
    "open_exec": "pods.open_exec(...)",
    "attach": "pods.attach(...)",
    "port_forward": "pods.port_forward(...)",
    "evict": "pods.evict(...)",
    "add_ephemeral_container": "pods.add_ephemeral_container(...)",
    "proxy_pod": "pods.proxy(...)",
}


class MovedPodVerbs:
    """A base class of the clients: reading a pod method they no longer have
    (:data:`MOVED_TO_PODS`) raises an ``AttributeError`` that names its new call.

    Only a failed attribute lookup reaches it (Python's ``__getattr__``), so it costs nothing
    otherwise; mypy does not see it, so a static check still reports the old names as missing.

    Example::

        >>> class Client(MovedPodVerbs):
        ...     pass
        >>> Client().pod_log  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        AttributeError: 'Client' object has no attribute 'pod_log': ... use client.pods.log(...)
    """

    __slots__ = ()

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> NoReturn:
            moved = MOVED_TO_PODS.get(name)
            message = f"{type(self).__name__!r} object has no attribute {name!r}"
            if moved is not None:
                message += f": the pod verbs moved to client.pods: use client.{moved}"
            raise AttributeError(message, name=name, obj=self)


if TYPE_CHECKING:
    # The log implementations must fit their overloads (a wrong option, default or result
    # type is a mypy error here).

    class _PodsConforms(PodLogCalls):
        log = Pods._log
        log_stream = Pods._log_stream
