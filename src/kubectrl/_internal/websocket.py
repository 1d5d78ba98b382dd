"""The refusal of a WebSocket upgrade, shared by the client's WebSocket and FakeAPI's in-memory
one: the client turns it into the typed API error of its status."""

from __future__ import annotations

__all__ = ["WebSocketRefusedError"]


class WebSocketRefusedError(Exception):
    """The server refused the upgrade with an HTTP status (carried in ``status``)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
