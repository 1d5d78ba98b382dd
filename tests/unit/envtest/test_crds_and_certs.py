"""Reading CRD files and issuing certificates (no control plane needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubectrl.envtest import ControlPlaneError
from kubectrl.envtest._certs import CertificateAuthority
from kubectrl.envtest._crds import load_crds

DATA = Path(__file__).resolve().parents[2] / "data"


def test_load_crds_reads_files_and_directories() -> None:
    from_file = load_crds([DATA / "crds" / "widgets.yaml"])
    from_dir = load_crds([DATA / "crds"])
    assert [crd["metadata"]["name"] for _, crd in from_file] == ["widgets.test.kubectrl.dev"]
    assert [path.name for path, _ in from_dir] == ["widgets.yaml"]


def test_load_crds_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(ControlPlaneError, match=r"missing\.yaml does not exist"):
        load_crds([tmp_path / "missing.yaml"])
    not_a_crd = tmp_path / "cm.yaml"
    not_a_crd.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    with pytest.raises(ControlPlaneError, match=r"cm\.yaml holds no CustomResourceDefinition"):
        load_crds([not_a_crd])
    garbage = tmp_path / "garbage.yaml"
    garbage.write_text("kind: [unclosed\n")
    with pytest.raises(ControlPlaneError, match=r"garbage\.yaml is not valid YAML"):
        load_crds([garbage])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ControlPlaneError, match=r"empty has no \.yaml"):
        load_crds([empty])


def test_client_certificates_carry_user_and_groups() -> None:
    from cryptography import x509
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    ca = CertificateAuthority()
    pair = ca.issue("alice", organizations=["dev", "ops"])
    cert = x509.load_pem_x509_certificate(pair.cert_pem)
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "alice"
    groups = [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    assert groups == ["dev", "ops"]
    usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    ca_cert = x509.load_pem_x509_certificate(ca.cert_pem)
    cert.verify_directly_issued_by(ca_cert)
    assert "PRIVATE KEY" not in repr(pair)
