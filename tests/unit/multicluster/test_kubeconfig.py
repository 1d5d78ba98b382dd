"""Kubeconfigs from untrusted places: refused with an error naming the source and the field.

What client-go would do with these (``tools/clientcmd/api/types.go``: ``exec``,
``auth-provider``, ``tokenFile``, ``client-key``, ``certificate-authority``) is run a program or
read a local file; a kubeconfig from a Secret must do neither unless the program allows it.
"""

from __future__ import annotations

import base64

import pytest

from kubectrl.errors import ConfigError
from kubectrl.multicluster import KubeconfigPolicy, load_untrusted_kubeconfig


def kubeconfig(user: str, cluster: str = 'server: "https://127.0.0.1:6443"') -> str:
    return f"""
clusters: [{{name: c, cluster: {{{cluster}}}}}]
users: [{{name: u, user: {{{user}}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
"""


def test_a_token_kubeconfig_loads_and_is_named_after_its_source() -> None:
    config = load_untrusted_kubeconfig(kubeconfig("token: abc"), source="secret fleet/east")
    assert config.server == "https://127.0.0.1:6443"
    assert config.source == "secret fleet/east"


@pytest.mark.parametrize(
    ("user", "cluster", "field"),
    [
        (
            "exec: {command: /bin/sh, apiVersion: client.authentication.k8s.io/v1}",
            None,
            "users[name=u].user.exec",
        ),
        (
            "auth-provider: {name: gcp, config: {cmd-path: /bin/sh}}",
            None,
            "users[name=u].user.auth-provider",
        ),
        (
            "tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token",
            None,
            "users[name=u].user.tokenFile",
        ),
        ("client-key: /etc/ssh/ssh_host_rsa_key", None, "users[name=u].user.client-key"),
        (
            "token: abc",
            'server: "https://x", certificate-authority: /etc/passwd',
            "clusters[name=c].cluster.certificate-authority",
        ),
    ],
)
def test_code_and_file_references_are_refused(user: str, cluster: str | None, field: str) -> None:
    text = kubeconfig(user, cluster) if cluster else kubeconfig(user)
    with pytest.raises(ConfigError) as caught:
        load_untrusted_kubeconfig(text, source="secret fleet/evil data.kubeconfig")
    assert caught.value.field == field
    assert caught.value.path == "secret fleet/evil data.kubeconfig"


def test_size_bound_malformed_yaml_and_bad_data_name_the_source() -> None:
    with pytest.raises(ConfigError, match="over the limit of 100"):
        load_untrusted_kubeconfig(
            "x" * 101, source="file big", policy=KubeconfigPolicy(max_bytes=100)
        )
    with pytest.raises(ConfigError, match=r"^file bad: malformed YAML"):
        load_untrusted_kubeconfig("a: [b", source="file bad")
    with pytest.raises(ConfigError, match="top level is a list"):
        load_untrusted_kubeconfig("- a", source="file list")
    bad_ca = kubeconfig("token: a", 'server: "https://x", certificate-authority-data: "!!"')
    with pytest.raises(ConfigError) as caught:
        load_untrusted_kubeconfig(bad_ca, source="secret ns/s")
    assert caught.value.path == "secret ns/s"
    assert "kubectrl-mc-" not in str(caught.value)  # never the throw-away file's name


def test_a_credential_in_a_malformed_kubeconfig_is_never_echoed() -> None:
    secret = base64.b64encode(b"super-secret-token").decode()
    with pytest.raises(ConfigError) as caught:
        load_untrusted_kubeconfig(f"users: [{{name: u, user: {{token: {secret}", source="s")
    assert secret not in str(caught.value)


def test_allow_files_lets_a_trusted_reference_through(tmp_path) -> None:  # type: ignore[no-untyped-def]
    token = tmp_path / "token"
    token.write_text("abc")
    config = load_untrusted_kubeconfig(
        kubeconfig(f"tokenFile: {token}"),
        source="file ok",
        policy=KubeconfigPolicy(allow_files=True),
    )
    assert config.server == "https://127.0.0.1:6443"
