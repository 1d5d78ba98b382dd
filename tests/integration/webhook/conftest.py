"""A webhook server run in a thread of its own (as a controller process would be), with a
self-signed serving certificate for 127.0.0.1, and the configurations pointing the control
plane at it."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import threading
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kubectrl.webhook import WebhookServer

T = TypeVar("T")


@dataclass
class Pair:
    cert_pem: bytes
    key_pem: bytes
    serial: int


def make_pair() -> Pair:
    """A self-signed serving certificate for 127.0.0.1 that is its own CA."""
    key = ec.generate_private_key(ec.SECP256R1())
    serial = x509.random_serial_number()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"kubectrl-webhook-{serial:x}")])
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
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return Pair(cert.public_bytes(serialization.Encoding.PEM), key_pem, serial)


def write_pair(directory: Path, pair: Pair) -> None:
    """Replace the files as a secret volume update does: new files renamed over the old."""
    for name, data in (("tls.key", pair.key_pem), ("tls.crt", pair.cert_pem)):
        tmp = directory / f".{name}.tmp"
        tmp.write_bytes(data)
        tmp.replace(directory / name)


class ThreadedServer:
    """Runs a WebhookServer on an event loop in a background thread."""

    def __init__(self, server: WebhookServer) -> None:
        self.server = server
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="webhook-server", daemon=True
        )

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=60)

    def start(self) -> None:
        self.thread.start()
        self.call(self.server.start())

    def stop(self) -> None:
        try:
            self.call(self.server.stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=30)
            self.loop.close()
