"""What both of the client's asyncio transports ask of a socket's transport.

Kept apart from :mod:`kubectrl.client._fast_transport` (httptools) and
:mod:`kubectrl.client._transport` (httpcore), which each import only what they use.
"""

from __future__ import annotations

import asyncio
import select

__all__ = ["socket_readable", "stream_transport"]


def stream_transport(transport: asyncio.BaseTransport | None) -> asyncio.Transport:
    """``transport`` as the stream transport it is. asyncio hands a stream connection an
    ``asyncio.Transport``; uvloop's ``TCPTransport`` has its methods without being a subclass,
    so the check is for what a stream transport does (write, pause and resume reading)."""
    if isinstance(transport, asyncio.Transport):
        return transport
    if transport is None or not all(
        hasattr(transport, name) for name in ("write", "pause_reading", "resume_reading")
    ):
        raise TypeError(f"expected a stream transport for a TCP connection, got {transport!r}")
    return transport  # type: ignore[return-value]  # a stream transport, duck-typed


_POLL_READABLE = select.POLLIN | select.POLLPRI | select.POLLERR | select.POLLHUP


def socket_readable(transport: asyncio.BaseTransport | None) -> bool:
    """Whether ``transport``'s socket has bytes (or an end) that asyncio has not read yet.

    An idle connection with anything to read is never reused: it is an answer nobody asked for
    (which the next request would take as its own) or the server's close. The loop reads such
    bytes only when it gets to it, and a busy loop (a reconcile) may not have.
    """
    sock = transport.get_extra_info("socket") if transport is not None else None
    if sock is None:
        return True
    poller = select.poll()
    poller.register(sock.fileno(), _POLL_READABLE)
    return bool(poller.poll(0))
