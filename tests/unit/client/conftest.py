from __future__ import annotations

from pathlib import Path

import pytest
from client_loopback import make_client

__all__ = ["make_client", "tls_files"]


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A CA, and a serving certificate for 127.0.0.1 and `api.test` it signed."""
    from kubectrl.envtest._certs import CertificateAuthority

    folder = tmp_path_factory.mktemp("tls")
    ca = CertificateAuthority()
    pair = ca.issue("server", dns_names=["api.test"], ip_addresses=["127.0.0.1"], server=True)
    paths = folder / "ca.pem", folder / "cert.pem", folder / "key.pem"
    for path, pem in zip(paths, (ca.cert_pem, pair.cert_pem, pair.key_pem), strict=True):
        path.write_bytes(pem)
    return paths
