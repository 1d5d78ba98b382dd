"""Blocking twins of the live pod streams: an exec/attach session and a port-forward.

The async objects live on the blocking client's :class:`~kubectrl.client._blocking.Portal`
loop; each method here runs one call there and waits for it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from types import TracebackType
from typing import TypeVar

from kubectrl.client._blocking import Portal
from kubectrl.client._pods import ExecSession, SessionOpener
from kubectrl.client._portforward import PortForward

__all__ = ["BlockingExecSession", "BlockingPortForward"]

T = TypeVar("T")


async def _wait(awaitable: Awaitable[T]) -> T:
    return await awaitable


class BlockingExecSession:
    """A blocking :class:`~kubectrl.client.ExecSession` (from ``BlockingClient.open_exec`` or
    ``attach``): opened on creation, closed by :meth:`close` or on leaving ``with``.

    Example::

        with client.open_exec("web-0", ["cat"], namespace="ns", stdin=True) as session:
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

        with client.port_forward("web-0", 8080, namespace="ns") as forward:
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
