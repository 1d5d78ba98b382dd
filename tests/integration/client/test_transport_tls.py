"""TLS through the client's asyncio transport, against the real kube-apiserver's serving cert.

The certificate is checked against ``tls-server-name`` when a kubeconfig sets it (client-go's
``rest.TLSClientConfig.ServerName``), and against the URL's host otherwise.
"""

from __future__ import annotations

import pytest

from kubectrl.client import AsyncClient, ClientConfig
from kubectrl.errors import APIConnectionError


async def test_a_name_in_the_certificate_verifies(client_config: ClientConfig) -> None:
    config = client_config.with_options(tls_server_name="kubernetes.default.svc")
    async with AsyncClient(config) as client:
        namespace = await client.get(("v1", "Namespace"), "default")
        assert namespace["metadata"]["name"] == "default"
        # A watch goes through the same TLS (its own connection pool).
        async with client.watch(
            ("v1", "Namespace"), resource_version=namespace["metadata"]["resourceVersion"]
        ) as stream:
            assert stream.resource_version


async def test_a_name_not_in_the_certificate_is_refused(client_config: ClientConfig) -> None:
    config = client_config.with_options(tls_server_name="not-the-apiserver.example")
    async with AsyncClient(config) as client:
        with pytest.raises(APIConnectionError) as failure:
            await client.get(("v1", "Namespace"), "default")
    assert "certificate" in str(failure.value).lower()
    assert config.server in str(failure.value)
