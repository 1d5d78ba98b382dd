"""The blocking pod verbs: :class:`BlockingPods` (``BlockingClient.pods``), and the blocking
twins of the live pod streams (an exec/attach session, a port-forward).

:class:`BlockingPods` is derived from :class:`~kubectrl.client._pods.Pods` the way
:class:`~kubectrl.client.BlockingClient` is derived from :class:`~kubectrl.client.AsyncClient`
(:mod:`kubectrl._internal.blocking`): each method runs the async one on the client's
:class:`~kubectrl._internal.blocking.Portal` loop and waits for it, so there is one
implementation of each verb. The two log calls are overloaded (``str``, or ``bytes`` with
``encoding=None``), which ``ParamSpec`` cannot carry: their blocking signatures are declared in
:class:`BlockingPodLogCalls` and mypy checks the derived methods against them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Protocol, TypeVar, overload

from typing_extensions import Unpack

from kubectrl._internal.blocking import (
    BlockingFacade,
    Portal,
    blocking,
    blocking_iterator,
    blocking_wrapped,
)
from kubectrl.client._pod_logs import LogOptions, LogStreamOptions
from kubectrl.client._pods import PodRef, Pods
from kubectrl.client._portforward import PortForward
from kubectrl.client._remotecommand import ExecSession, SessionOpener

__all__ = ["BlockingExecSession", "BlockingPodLogCalls", "BlockingPods", "BlockingPortForward"]

T = TypeVar("T")


async def _wait(awaitable: Awaitable[T]) -> T:
    return await awaitable


class BlockingExecSession:
    """A blocking :class:`~kubectrl.client.ExecSession` (from ``BlockingPods.open_exec`` or
    ``attach``): opened on creation, closed by :meth:`close` or on leaving ``with``.

    Example::

        with client.pods.open_exec("web-0", ["cat"], namespace="ns", stdin=True) as session:
            session.write(b"hi")
            assert session.read_stdout(2) == b"hi"
    """

    def __init__(self, portal: Portal, opener: SessionOpener) -> None:
        self._portal = portal
        self.session: ExecSession = portal.call(_wait(opener))

    def __repr__(self) -> str:
        return f"Blocking{self.session!r}"

    def __enter__(self) -> BlockingExecSession:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def protocol(self) -> str:
        """The channel protocol the server chose."""
        return self.session.protocol

    def write(self, data: bytes) -> None:
        """Send ``data`` to stdin."""
        self._portal.call(self.session.write(data))

    def close_stdin(self) -> None:
        """Close stdin (``v5.channel.k8s.io`` only)."""
        self._portal.call(self.session.close_stdin())

    def resize(self, width: int, height: int) -> None:
        """Tell the terminal's new size."""
        self._portal.call(self.session.resize(width, height))

    def read_stdout(self, n: int = -1) -> bytes:
        """Up to ``n`` bytes of stdout (all of it until the end with ``n=-1``)."""
        return self._portal.call(self.session.stdout.read(n))

    def read_stderr(self, n: int = -1) -> bytes:
        """Up to ``n`` bytes of stderr (all of it until the end with ``n=-1``)."""
        return self._portal.call(self.session.stderr.read(n))

    def wait(self) -> int:
        """Wait for the command's exit code (errors as :meth:`ExecSession.wait`)."""
        return self._portal.call(self.session.wait())

    def close(self) -> None:
        """Close the connection (idempotent)."""
        if not self._portal.closed:
            self._portal.call(self.session.close())


class BlockingPortForward:
    """A blocking :class:`~kubectrl.client.PortForward`: listening from creation until
    :meth:`close` (or the end of ``with``); the connections are served on the client's loop.

    Example::

        with client.pods.port_forward("web-0", 8080, namespace="ns") as forward:
            socket.create_connection(forward.address)
    """

    def __init__(self, portal: Portal, forward: PortForward) -> None:
        self._portal = portal
        self.forward = forward
        portal.call(forward.start())

    def __repr__(self) -> str:
        return f"Blocking{self.forward!r}"

    def __enter__(self) -> BlockingPortForward:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def address(self) -> tuple[str, int]:
        """The bound local ``(host, port)``."""
        return self.forward.address

    @property
    def errors(self) -> list[str]:
        """What the server's error channels said."""
        return list(self.forward.errors)

    def close(self) -> None:
        """Stop listening and close every connection (idempotent)."""
        if not self._portal.closed:
            self._portal.call(self.forward.close())


class BlockingPodLogCalls(Protocol):
    """The blocking log calls' typed signatures: :class:`~kubectrl.client._pods.PodLogCalls`
    returning the log instead of an awaitable, and an iterator of lines."""

    @overload
    def log(
        self, pod: PodRef, *, encoding: str = "utf-8", **options: Unpack[LogOptions]
    ) -> str: ...
    @overload
    def log(self, pod: PodRef, *, encoding: None, **options: Unpack[LogOptions]) -> bytes: ...
    def log(
        self, pod: PodRef, *, encoding: str | None = "utf-8", **options: Unpack[LogOptions]
    ) -> str | bytes:
        """Blocking :meth:`Pods.log <kubectrl.client.Pods.log>`: the whole log, as text, or as
        bytes with ``encoding=None``."""

    @overload
    def log_stream(
        self, pod: PodRef, *, encoding: str = "utf-8", **options: Unpack[LogStreamOptions]
    ) -> Iterator[str]: ...
    @overload
    def log_stream(
        self, pod: PodRef, *, encoding: None, **options: Unpack[LogStreamOptions]
    ) -> Iterator[bytes]: ...
    def log_stream(
        self,
        pod: PodRef,
        *,
        encoding: str | None = "utf-8",
        **options: Unpack[LogStreamOptions],
    ) -> Iterator[str] | Iterator[bytes]:
        """Blocking :meth:`Pods.log_stream <kubectrl.client.Pods.log_stream>`: the followed
        log's lines, as text, or as bytes with ``encoding=None``."""


class BlockingPods(BlockingFacade):
    """The blocking pod verbs (``BlockingClient.pods``): :class:`~kubectrl.client.Pods`' verbs,
    each run on the client's loop thread (same parameters, defaults, errors and docstrings).
    ``log_stream`` gives a plain iterator (``close()`` stops early); ``open_exec`` and
    ``attach`` a :class:`BlockingExecSession`, ``port_forward`` a :class:`BlockingPortForward`.

    Example::

        with BlockingClient(load_config()) as client:
            text = client.pods.log("web-0", namespace="ns", tail_lines=100)
            for line in client.pods.log_stream("web-0", namespace="ns"):
                print(line)
    """

    def __init__(self, portal: Portal, pods: Pods) -> None:
        self._portal = portal
        self._target: Pods = pods

    def __repr__(self) -> str:
        return f"Blocking{self._target!r}"

    exec = blocking(Pods.exec)
    open_exec = blocking_wrapped(Pods.open_exec, BlockingExecSession, returns="BlockingExecSession")
    attach = blocking_wrapped(Pods.attach, BlockingExecSession, returns="BlockingExecSession")
    port_forward = blocking_wrapped(
        Pods.port_forward, BlockingPortForward, returns="BlockingPortForward"
    )
    evict = blocking(Pods.evict)
    add_ephemeral_container = blocking(Pods.add_ephemeral_container)
    proxy = blocking(Pods.proxy)

    # The log calls are Pods' implementations run on the loop thread; their public signatures
    # are BlockingPodLogCalls' overloads, which mypy checks them against (below).
    _log = blocking(Pods._log)
    _log_stream = blocking_iterator(Pods._log_stream)

    if TYPE_CHECKING:
        log = BlockingPodLogCalls.log
        log_stream = BlockingPodLogCalls.log_stream
    else:
        log = _log
        log_stream = _log_stream


if TYPE_CHECKING:
    # The derived log calls must fit the blocking overloads (mypy checks it here).

    class _BlockingPodsConforms(BlockingPodLogCalls):
        log = BlockingPods._log
        log_stream = BlockingPods._log_stream
