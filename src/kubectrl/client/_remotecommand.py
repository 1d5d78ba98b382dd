"""The channel protocol of exec and attach (client-go's ``tools/remotecommand``).

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

from kubectrl.client._paths import check_container, pod_path
from kubectrl.client._websocket import WebSocket, WebSocketRefusedError, open_websocket
from kubectrl.errors import APIConnectionError, APIError, api_error_from_response

if TYPE_CHECKING:
    from kubectrl.client._config import ClientConfig

__all__ = [
    "CHANNEL_PROTOCOLS",
    "ExecResult",
    "ExecSession",
    "Refused",
    "SessionOpener",
    "exit_code_of",
    "open_stream",
    "run_to_end",
]

log = logging.getLogger("kubectrl.client.pods")

#: The channel subprotocols offered for exec and attach, preferred first.
CHANNEL_PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")

STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255

#: Turns a refused WebSocket upgrade into the server's typed error: called with the path, the
#: query, the subresource, the namespace, the pod's name and the refusal; raises, or returns when
#: the server's answer says nothing more (the caller then raises for the refusal itself).
Refused = Callable[
    [str, list[tuple[str, str]], str, str, str, WebSocketRefusedError], Awaitable[None]
]


@dataclasses.dataclass(frozen=True)
class ExecResult:
    """What a finished command gave: its ``stdout`` and ``stderr`` bytes and ``exit_code``.

    ``status`` is the Status the server sent on the error channel (``{}`` if none).

    Example::

        result = await client.pods.exec("db-0", ["pg_dump", "app"], namespace="ns")
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

        async with client.pods.open_exec("db-0", ["psql"], namespace="ns", stdin=True) as s:
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

        async with client.pods.open_exec("web-0", ["sh"], namespace="ns", stdin=True) as session:
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
    refused: Refused,
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

    ``refused`` (:data:`Refused`) turns a refused upgrade into the typed API error (the pods
    ask again without upgrading, for the server's Status).
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
