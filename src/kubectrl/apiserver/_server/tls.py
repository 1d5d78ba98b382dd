"""A self-signed serving certificate, for a server started without one (development, tests).

As ``k8s.io/apiserver`` does when no ``--tls-cert-file`` is given: one ECDSA P-256 key, a
certificate valid for a year naming the given hosts (IP addresses and DNS names), which is its
own CA (a client verifies the server with the certificate itself).
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Sequence

__all__ = ["self_signed"]


def self_signed(hosts: Sequence[str]) -> tuple[bytes, bytes]:
    """``(certificate PEM, key PEM)`` for ``hosts`` (needs the ``cryptography`` package)."""
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            "a self-signed serving certificate needs the 'cryptography' package "
            '(pip install "kubectrl[envtest]"), or give cert_file and key_file'
        ) from err
    if not hosts:
        raise ValueError("a self-signed certificate needs at least one host name or address")
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, str(hosts[0]))])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        # Key identifiers: Python 3.13's default verification (VERIFY_X509_STRICT) needs them.
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(key.public_key()), critical=False
        )
        .sign(key, hashes.SHA256())
    )
    return (
        cert.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )
