"""Pods' streaming subresources: exec, attach, eviction (the REST client's ``remotecommand``).

Exec and attach speak the Kubernetes channel protocol over a WebSocket (see
:mod:`kubectrl.client._websocket`): subprotocol ``v5.channel.k8s.io``, falling back to
``v4.channel.k8s.io`` with a server that does not offer v5. Every binary message starts with a
channel byte: 0 stdin, 1 stdout, 2 stderr, 3 error (a ``metav1.Status`` JSON: ``Success``, or a
``Failure`` whose reason ``NonZeroExitCode`` carries the exit code in ``details.causes``'
``ExitCode`` entry), 4 resize (``{"Width": w, "Height": h}``), and in v5 only 255 close (its
payload is the channel to close: the client closes stdin with ``[255, 0]``). The framing is
k8s.io/apimachinery/pkg/util/httpstream/wsstream/conn.go; the Status and its exit code are
client-go's tools/remotecommand/v4.go (errorDecoderV4).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

import httpx

from kubectrl.client._body import json_body
from kubectrl.client._models import to_dict
from kubectrl.client._paths import check_container, pod_path
from kubectrl.client._websocket import WebSocket, WebSocketRefusedError, open_websocket
from kubectrl.errors import (
    APIConnectionError,
    APIError,
    InvalidPathSegmentError,
    api_error_from_response,
)

if TYPE_CHECKING:
    from kubectrl.client._config import ClientConfig
    from kubectrl.client._portforward import PortForward

__all__ = [
    "CHANNEL_PROTOCOLS",
    "ExecResult",
    "ExecSession",
    "PodRef",
    "PodStreams",
    "SessionOpener",
    "exit_code_of",
    "pod_target",
]

log = logging.getLogger("kubectrl.client.pods")

#: The channel subprotocols offered for exec and attach, preferred first.
CHANNEL_PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")

STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255

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


@dataclasses.dataclass(frozen=True)
class ExecResult:
    """What a finished command gave: its ``stdout`` and ``stderr`` bytes and ``exit_code``.

    ``status`` is the Status the server sent on the error channel (``{}`` if none).

    Example::

        result = await client.exec("db-0", ["pg_dump", "app"], namespace="ns")
        if result.exit_code != 0:
            raise RuntimeError(result.stderr.decode())
    """

    stdout: bytes
    stderr: bytes
    exit_code: int
    status: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether the command exited with code 0."""
        return self.exit_code == 0


def exit_code_of(status: Mapping[str, Any]) -> int | None:
    """The exit code a channel-protocol Status reports: 0 for ``Success``, the ``ExitCode``
    cause for a ``NonZeroExitCode`` failure, ``None`` for any other failure.

    Example::

        >>> exit_code_of({"status": "Failure", "reason": "NonZeroExitCode",
        ...               "details": {"causes": [{"reason": "ExitCode", "message": "3"}]}})
        3
    """
    if status.get("status") == "Success":
        return 0
    if status.get("reason") != "NonZeroExitCode":
        return None
    details = status.get("details")
    causes = details.get("causes") if isinstance(details, Mapping) else None
    for cause in causes if isinstance(causes, list) else ():
        if isinstance(cause, Mapping) and cause.get("reason") == "ExitCode":
            try:
                return int(cause.get("message", ""))
            except ValueError:
                return None
    return None


class ExecSession:
    """An open exec or attach: write stdin, read ``stdout``/``stderr``, resize, wait for the exit.

    ``stdout`` and ``stderr`` are :class:`asyncio.StreamReader` objects (``read``, ``readline``,
    ``readexactly``, ``async for line in ...``), fed until the server closes. ``wait()``
    returns the exit code (raising the typed API error for a failure that is not an exit
    code, and :class:`~kubectrl.errors.APIConnectionError` when the connection ends without
    the command's status). Use it as an async context manager: leaving it closes the
    connection.

    Example::

        async with client.open_exec("db-0", ["psql"], namespace="ns", stdin=True) as s:
            await s.write(b"select 1;\\n")
            await s.close_stdin()
            print(await s.stdout.read())
            assert await s.wait() == 0
    """

    def __init__(
        self, socket: WebSocket, *, what: str, namespace: str, name: str, verb: str
    ) -> None:
        self._socket = socket
        self._what = what
        self._namespace = namespace
        self._name = name
        self._verb = verb
        self.protocol = socket.subprotocol
        self.stdout = asyncio.StreamReader(limit=2**24)
        self.stderr = asyncio.StreamReader(limit=2**24)
        self._status: dict[str, Any] | None = None
        self._error_bytes = bytearray()
        self._failure: BaseException | None = None
        self._reader = asyncio.get_running_loop().create_task(self._pump())

    def __repr__(self) -> str:
        return f"ExecSession({self._what}, protocol={self.protocol!r})"

    async def __aenter__(self) -> ExecSession:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def _pump(self) -> None:
        try:
            while True:
                message = await self._socket.receive()
                if message is None:
                    break
                if not message:
                    continue
                channel, data = message[0], message[1:]
                if channel == STDOUT:
                    self.stdout.feed_data(data)
                elif channel == STDERR:
                    self.stderr.feed_data(data)
                elif channel == ERROR:
                    self._error_bytes += data
                else:  # client-go's readDemuxLoop: "Unknown stream id %d, discarding message"
                    log.warning(
                        "%s: a message on unknown channel %d (%d bytes) discarded",
                        self._what,
                        channel,
                        len(data),
                    )
        except (ConnectionError, OSError) as err:
            self._failure = err
        except Exception as err:  # aiohttp's errors: reported by wait()
            self._failure = err
        finally:
            self.stdout.feed_eof()
            self.stderr.feed_eof()
            if self._error_bytes:
                try:
                    decoded = json.loads(bytes(self._error_bytes))
                except ValueError:
                    decoded = {
                        "status": "Failure",
                        "message": bytes(self._error_bytes).decode(errors="replace"),
                    }
                self._status = decoded if isinstance(decoded, dict) else {}

    async def write(self, data: bytes) -> None:
        """Send ``data`` to the command's stdin (the session must be opened with ``stdin=True``)."""
        await self._send(bytes([STDIN]) + bytes(data))

    async def close_stdin(self) -> None:
        """Close stdin, so the command reads end-of-file (``v5.channel.k8s.io`` only).

        Raises :class:`~kubectrl.errors.UnsupportedFeatureError` on a v4 connection: that
        protocol cannot close one stream and keep the others.
        """
        if self.protocol != "v5.channel.k8s.io":
            from kubectrl.errors import UnsupportedFeatureError

            raise UnsupportedFeatureError(
                f"closing stdin of {self._what} (the server speaks {self.protocol or 'no'} "
                "channel protocol; closing one stream needs v5.channel.k8s.io)"
            )
        await self._send(bytes([CLOSE, STDIN]))

    async def resize(self, width: int, height: int) -> None:
        """Tell the terminal's new size (sessions opened with ``tty=True``)."""
        if width < 0 or height < 0:
            raise ValueError(f"terminal size must not be negative, got {width}x{height}")
        size = json.dumps({"Width": width, "Height": height}).encode()
        await self._send(bytes([RESIZE]) + size)

    async def _send(self, message: bytes) -> None:
        try:
            await self._socket.send(message)
        except (ConnectionError, OSError, RuntimeError) as err:
            raise APIConnectionError(
                f"the connection of {self._what} is closed: {type(err).__name__}: {err}",
                verb=self._verb,
                resource=self._what,
            ) from err

    @property
    def status(self) -> dict[str, Any] | None:
        """The Status from the error channel, once the server has closed (else ``None``)."""
        return self._status

    async def wait(self) -> int:
        """Wait for the command to end and return its exit code.

        Raises the typed :class:`~kubectrl.errors.APIError` for a failure without an exit code
        (a command that cannot start, an internal error) and
        :class:`~kubectrl.errors.APIConnectionError` when the connection closed before the
        command's status arrived (naming the pod, the subresource and the cause).
        """
        await asyncio.shield(self._reader)
        status = self._status
        if status is None:
            cause = (
                f"{type(self._failure).__name__}: {self._failure}"
                if self._failure is not None
                else "closed by the server"
            )
            raise APIConnectionError(
                f"the connection of {self._what} ended before the command's exit status "
                f"arrived ({cause})",
                verb=self._verb,
                resource=self._what,
            )
        code = exit_code_of(status)
        if code is None:
            http_code = status.get("code")
            err = api_error_from_response(
                http_code if isinstance(http_code, int) and 400 <= http_code < 600 else 500,
                json.dumps({"kind": "Status", "apiVersion": "v1", **status}).encode(),
                verb=self._verb,
                resource=self._what.split(" ")[0],
                namespace=self._namespace,
                name=self._name,
            )
            container = self._what.partition(" (container ")[2].rstrip(")")
            if container:  # the message names it too
                err.args = (f"{err.args[0]} (container {container})", *err.args[1:])
            raise err
        return code

    async def close(self) -> None:
        """Close the connection (idempotent); the reader stops, ``stdout``/``stderr`` end."""
        try:
            await self._socket.close()
        finally:
            if not self._reader.done():
                self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader


class SessionOpener:
    """An exec or attach about to open: ``await`` it for the :class:`ExecSession`, or use it
    as ``async with`` (the session is closed on leaving).

    Example::

        async with client.open_exec("web-0", ["sh"], namespace="ns", stdin=True) as session:
            await session.write(b"exit 3\\n")
            assert await session.wait() == 3
    """

    def __init__(self, opener: Callable[[], Awaitable[ExecSession]], what: str) -> None:
        self._opener = opener
        self._what = what
        self._session: ExecSession | None = None

    def __repr__(self) -> str:
        return f"SessionOpener({self._what})"

    def __await__(self) -> Generator[Any, None, ExecSession]:
        return self._opener().__await__()

    async def __aenter__(self) -> ExecSession:
        self._session = await self._opener()
        return self._session

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()


def _command_query(
    command: Sequence[str] | None,
    container: str | None,
    stdin: bool,
    stdout: bool,
    stderr: bool,
    tty: bool,
) -> list[tuple[str, str]]:
    query: list[tuple[str, str]] = [("command", part) for part in command or ()]
    if container:
        query.append(("container", container))
    query += [
        ("stdin", "true" if stdin else "false"),
        ("stdout", "true" if stdout else "false"),
        # A terminal merges stderr into stdout: the server refuses both at once.
        ("stderr", "true" if stderr and not tty else "false"),
        ("tty", "true" if tty else "false"),
    ]
    return query


async def open_stream(
    config: ClientConfig,
    refused: Any,
    *,
    subresource: str,
    namespace: str,
    name: str,
    command: Sequence[str] | None,
    container: str | None,
    stdin: bool,
    stdout: bool,
    stderr: bool,
    tty: bool,
) -> ExecSession:
    """Open ``pods/<subresource>`` (exec or attach) as an :class:`ExecSession`.

    ``refused(path, query, what)`` turns a refused upgrade into the typed API error (the REST
    client asks again without upgrading, for the server's Status).
    """
    if subresource == "exec" and not command:
        raise ValueError(f"exec into pod {namespace}/{name}: the command is empty")
    if isinstance(command, str):
        raise TypeError(
            f"exec into pod {namespace}/{name}: the command is a list of arguments, not the "
            f"string {command!r} (e.g. ['sh', '-c', {command!r}])"
        )
    path = pod_path(namespace, name, subresource, verb=subresource)
    container = check_container(container, verb=subresource, resource=f"pods/{subresource}")
    query = _command_query(command, container, stdin, stdout, stderr, tty)
    what = f"pods/{subresource} {namespace}/{name}" + (
        f" (container {container})" if container else ""
    )
    try:
        socket = await open_websocket(config, path, query, CHANNEL_PROTOCOLS, what=what)
    except WebSocketRefusedError as err:
        await refused(path, query, subresource, namespace, name, err)
        raise APIError(
            f"the server refused the WebSocket upgrade: HTTP {err.status}",
            code=err.status,
            verb=subresource,
            resource=f"pods/{subresource}",
            namespace=namespace,
            name=name,
        ) from err
    return ExecSession(socket, what=what, namespace=namespace, name=name, verb=subresource)


async def run_to_end(session: ExecSession, data: bytes | None) -> ExecResult:
    """Feed ``data`` to stdin (then close it), collect stdout and stderr, wait for the exit."""
    async with session:
        if data is not None:
            if data:
                await session.write(data)
            if session.protocol == "v5.channel.k8s.io":
                await session.close_stdin()
        out, err = await asyncio.gather(session.stdout.read(), session.stderr.read())
        code = await session.wait()
        return ExecResult(out, err, code, dict(session.status or {}))


class PodStreams:
    """The pods' streaming verbs of :class:`~kubectrl.client.AsyncClient`: ``exec``,
    ``open_exec``, ``attach``, ``port_forward`` and ``evict`` (a base class of the client)."""

    if TYPE_CHECKING:
        config: ClientConfig

        async def _send(
            self,
            method: str,
            path: str,
            *,
            verb: str,
            label: str = "",
            namespace: str | None = None,
            name: str | None = None,
            params: Mapping[str, Any] | None = None,
            body: Any = ...,
            content_type: str = "application/json",
            idempotent: bool | None = None,
            accept: str | None = None,
            raw_content: bytes | None = None,
            extra_headers: Mapping[str, str] | None = None,
            retry: bool = True,
            check_status: bool = True,
        ) -> httpx.Response: ...

        async def _throttle(self) -> None: ...

        def _url(self, path: str, query: dict[str, str]) -> httpx.URL: ...

        _http: httpx.AsyncClient
        _extensions: dict[str, Any]

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
        import urllib.parse

        try:
            await self._send(
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

    def _pod(self, pod: PodRef, namespace: str | None) -> tuple[str, str]:
        return pod_target(pod, namespace, self.config.namespace)

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
        live :class:`ExecSession` (stdin, stdout/stderr readers, resize, exit code), or use it
        as ``async with`` to close the session on leaving.

        ``pod`` is a name (``namespace=`` or the config's namespace) or a Pod object. Without
        ``container`` the server picks the pod's only (or default) container.

        Example::

            async with client.open_exec("web-0", ["sh"], namespace="ns", stdin=True) as s:
                await s.write(b"echo hi; exit 3\\n")
                assert await s.stdout.readline() == b"hi\\n"
                assert await s.wait() == 3
        """
        ns, name = self._pod(pod, namespace)
        return SessionOpener(
            lambda: open_stream(
                self.config,
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

            result = await client.exec("db-0", ["pg_dump", "app"], namespace="ns")
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

            async with client.attach("web-0", namespace="ns") as session:
                first = await session.stdout.readline()
        """
        ns, name = self._pod(pod, namespace)
        return SessionOpener(
            lambda: open_stream(
                self.config,
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

            async with client.port_forward("web-0", 8080, namespace="ns") as forward:
                reader, writer = await asyncio.open_connection(*forward.address)
        """
        from kubectrl.client._portforward import PORTFORWARD_PROTOCOLS, PortForward

        ns, name = self._pod(pod, namespace)
        path = pod_path(ns, name, "portforward", verb="portforward")
        what = f"pods/portforward {ns}/{name}"
        config = self.config

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
                await client.evict("web-0", namespace="ns")
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
        response = await self._send(
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


# The verbs are AsyncClient's (this base class only holds them): so they are named in its
# documentation and in the docstrings of their blocking twins.
for _verb in ("exec", "open_exec", "attach", "port_forward", "evict"):
    getattr(PodStreams, _verb).__qualname__ = f"AsyncClient.{_verb}"
