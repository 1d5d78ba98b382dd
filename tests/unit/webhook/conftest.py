"""Fixtures for the webhook server tests: self-signed serving certificates and a running server."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kubectrl._internal.clock import FakeClock
from kubectrl.webhook import WebhookServer, WebhookServerOptions


@dataclass
class Pair:
    cert_pem: bytes
    key_pem: bytes
    serial: int


def make_pair() -> Pair:
    """A self-signed certificate for 127.0.0.1 / localhost (its own CA)."""
    key = ec.generate_private_key(ec.SECP256R1())
    serial = x509.random_serial_number()
    # A distinct subject per pair: a client trusting two self-signed certificates with one
    # subject would look up the wrong one as the issuer.
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"kubectrl-webhook-test-{serial:x}")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(serial)
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    return Pair(
        cert.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
        serial,
    )


def write_pair(directory: Path, pair: Pair) -> None:
    """Replace the files as a secret volume update would: new files renamed over the old."""
    for name, data in (("tls.key", pair.key_pem), ("tls.crt", pair.cert_pem)):
        tmp = directory / f".{name}.tmp"
        tmp.write_bytes(data)
        tmp.replace(directory / name)


@pytest.fixture
def pair() -> Pair:
    return make_pair()


@pytest.fixture
def cert_dir(tmp_path: Path, pair: Pair) -> Path:
    write_pair(tmp_path, pair)
    return tmp_path


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def server(cert_dir: Path, clock: FakeClock) -> WebhookServer:
    """A server on a free loopback port whose handler timeout (10 s) runs on ``clock``."""
    return WebhookServer(
        WebhookServerOptions(host="127.0.0.1", port=0, cert_dir=str(cert_dir)), clock=clock
    )


@pytest.fixture
async def client(pair: Pair) -> AsyncIterator[httpx.AsyncClient]:
    context = ssl.create_default_context(cadata=pair.cert_pem.decode())
    async with httpx.AsyncClient(verify=context, timeout=30.0) as c:
        yield c
