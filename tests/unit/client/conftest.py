from __future__ import annotations

from client_loopback import make_client

__all__ = ["make_client"]
