"""The credentials protocol ``ClientConfig(credentials=...)`` takes is public and checked.

client-go's ``rest.Config`` takes a ``BearerTokenFile``, a ``WrapTransport`` or an
``ExecProvider`` (k8s.io/client-go/rest/config.go, transport/round_trippers.go); kubectrl's seam
for credentials of one's own is :class:`kubectrl.client.CredentialSource`: ``authorization()``
gives the ``Authorization`` header per request, ``invalidate()`` is asked after a 401 (the
``WrapTransport`` of client-go's exec plugin re-runs the plugin then), ``blocking`` says whether
``authorization()`` may block. Anything else given as ``credentials`` is refused when the config
is made, naming the field, not with an AttributeError at the first request.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubectrl.client import AsyncClient, ClientConfig, CredentialSource
from kubectrl.errors import ConfigError
from kubectrl.testing import FakeAPI


class CountingToken:
    blocking = False

    def __init__(self) -> None:
        self.asked = 0
        self.invalidated = 0

    def authorization(self) -> str | None:
        self.asked += 1
        return "Bearer t0k3n"

    def invalidate(self) -> bool:
        self.invalidated += 1
        return False


def test_a_source_of_ones_own_is_asked_per_request() -> None:
    source = CountingToken()
    assert isinstance(source, CredentialSource)
    api = FakeAPI()

    async def run() -> tuple[int, int]:
        async with AsyncClient(api.config(credentials=source)) as client:
            await client.list(("v1", "ConfigMap"), namespace="default")  # discovery too
            first = source.asked
            await client.list(("v1", "ConfigMap"), namespace="default")
            return first, source.asked

    first, second = asyncio.run(run())
    assert first >= 1
    assert second == first + 1
    assert source.invalidated == 0


class NoInvalidate:
    blocking = False

    def authorization(self) -> str | None:
        return "Bearer x"


@pytest.mark.parametrize(
    ("given", "missing"),
    [
        ("Bearer abc", "authorization"),
        (NoInvalidate(), "invalidate"),
        ({"token": "abc"}, "authorization"),
    ],
)
def test_anything_else_is_refused_naming_the_field(given: Any, missing: str) -> None:
    with pytest.raises(ConfigError, match="CredentialSource") as caught:
        ClientConfig(server="https://127.0.0.1:6443", credentials=given)
    assert caught.value.field == "credentials"
    assert missing in str(caught.value)
    assert "abc" not in str(caught.value)  # a token given by mistake is not echoed
