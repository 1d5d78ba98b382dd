"""TLS material kept in memory: CA data and client certificate/key without files on disk.

``ssl.SSLContext`` takes CA data in memory (``cadata``) but a certificate chain only as a file
name. Writing the private key to a temporary file leaves it on disk for good when the process is
killed before it cleans up (SIGKILL, OOM). On Linux the key goes into an anonymous memory file
(``memfd_create``) opened through ``/proc/self/fd``, which disappears with its descriptor; other
systems fall back to a private (0600) temporary file that is deleted as soon as OpenSSL has read
it, so it exists on disk only for the duration of one ``load_cert_chain`` call.
"""

from __future__ import annotations

import os
import ssl
import tempfile

__all__ = ["ca_data_for_ssl", "load_cert_chain_from_memory"]


def ca_data_for_ssl(data: bytes) -> str | bytes:
    """``cadata`` for :meth:`ssl.SSLContext.load_verify_locations`: PEM as text, DER as bytes."""
    if b"-----BEGIN" in data:
        return data.decode("ascii", errors="replace")
    return data


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def load_cert_chain_from_memory(ctx: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    """Load a PEM client certificate and its PEM key into ``ctx`` without leaving a file.

    Raises ``ssl.SSLError`` when they are not a certificate and a matching key (the caller turns
    that into a :class:`~kubectrl.errors.ConfigError` naming the field).
    """
    pem = cert.rstrip(b"\n") + b"\n" + key
    memfd_create = getattr(os, "memfd_create", None)
    if memfd_create is not None and os.path.isdir("/proc/self/fd"):
        fd = memfd_create("kubectrl-client-cert", getattr(os, "MFD_CLOEXEC", 0))
        try:
            _write_all(fd, pem)
            ctx.load_cert_chain(f"/proc/self/fd/{fd}")
        finally:
            os.close(fd)
        return
    fd, path = tempfile.mkstemp(prefix="kubectrl-", suffix=".pem")  # mode 0600
    try:
        try:
            _write_all(fd, pem)
        finally:
            os.close(fd)
        ctx.load_cert_chain(path)
    finally:
        os.unlink(path)
