"""Helpers for multicluster tests: a transport that can be cut, as a killed apiserver is."""

from __future__ import annotations

import httpx

from kubectrl.client import ClientConfig
from kubectrl.testing import FakeAPI


class Cuttable(httpx.AsyncBaseTransport):
    """Forwards to a FakeAPI until :meth:`cut`; then every request fails to connect (an open
    watch ends at its next read), until :meth:`restore`."""

    def __init__(self, api: FakeAPI) -> None:
        self.api = api
        self.down = False

    def cut(self) -> None:
        self.down = True
        self.api.drop_watches()

    def restore(self) -> None:
        self.down = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.down:
            raise httpx.ConnectError("connection refused (cut by the test)", request=request)
        return await self.api.transport.handle_async_request(request)

    def config(self) -> ClientConfig:
        return self.api.config(transport=self)
