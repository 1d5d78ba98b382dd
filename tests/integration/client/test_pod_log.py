"""pods/log through the real apiserver, to a stand-in kubelet on loopback.

There is no kubelet in the local control plane; the apiserver proxies ``pods/log`` to the node's
kubelet endpoint, so a Node whose status points at a small HTTPS server here lets the real
apiserver do its part (authorization, node lookup, proxying, streaming).
"""

from __future__ import annotations

import asyncio
import datetime
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kubectrl.client import AsyncClient

pytestmark = pytest.mark.integration


def _self_signed(tmp_path: Path) -> ssl.SSLContext:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fake-kubelet")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .sign(key, hashes.SHA256())
    )
    (tmp_path / "k.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "k.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(tmp_path / "k.crt", tmp_path / "k.key")
    return ctx


@pytest.fixture
async def fake_kubelet(tmp_path: Path) -> AsyncIterator[tuple[int, list[str]]]:
    paths: list[str] = []

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = (await reader.readline()).decode()
            while (await reader.readline()) not in (b"\r\n", b""):
                pass
            target = request_line.split(" ")[1]
            paths.append(target)
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
            )
            for i in range(3):
                data = f"line {i}\n".encode()
                writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                await writer.drain()
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        finally:
            writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0, ssl=_self_signed(tmp_path))
    try:
        yield server.sockets[0].getsockname()[1], paths
    finally:
        server.close()
        await server.wait_closed()


async def test_pod_log_and_follow(
    client: AsyncClient, namespace: str, fake_kubelet: tuple[int, list[str]]
) -> None:
    port, paths = fake_kubelet
    node_name = f"node-{namespace}"
    await client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node_name}})
    try:
        await client.status().patch(
            ("v1", "Node"),
            node_name,
            {
                "status": {
                    "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
                    "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
                }
            },
        )
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "web", "namespace": namespace},
                "spec": {
                    "nodeName": node_name,
                    "containers": [{"name": "app", "image": "nginx:latest"}],
                },
            }
        )
        text = await client.pods.log(
            "web", namespace=namespace, tail_lines=10, insecure_skip_tls_verify_backend=True
        )
        assert text == "line 0\nline 1\nline 2\n"
        lines = [
            line
            async for line in client.pods.log_stream(
                "web", namespace=namespace, insecure_skip_tls_verify_backend=True
            )
        ]
        assert lines == ["line 0", "line 1", "line 2"]
        assert paths[0].startswith(f"/containerLogs/{namespace}/web/app")
        assert "tailLines=10" in paths[0]
        assert "follow=true" in paths[1]
    finally:
        await client.delete(("v1", "Node"), node_name)
