"""Loading a kubeconfig never fails open and never leaks: exec plugins, CA data, server URLs, keys.

Exec plugin rules are client-go's (plugin/pkg/client/auth/exec/exec.go: a missing executable or
a non-zero exit is an error, never a fallback to anonymous requests; ``KUBERNETES_EXEC_INFO``
carries the ExecCredential spec; a command with a path separator is resolved against the
kubeconfig's directory as in tools/clientcmd/loader.go ``GetAuthInfoFileReferences``), except that
the plugin's stderr is dropped instead of passed through.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import stat
import tempfile
from pathlib import Path

import pytest
import yaml
from client_loopback import CONFIGMAPS, Request, json_response, loopback

from kubectrl.client import AsyncClient, ClientConfig, load_kubeconfig
from kubectrl.client._exec import ExecCredentials, ExecPlugin
from kubectrl.envtest._certs import CertificateAuthority
from kubectrl.errors import ConfigError

SECRET = "password=correct-horse-battery-staple"
TOKEN = "exec-token-0123456789abcdef"


def write_kubeconfig(path: Path, *, cluster: dict, user: dict) -> Path:
    data = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "dev",
        "clusters": [{"name": "c1", "cluster": cluster}],
        "users": [{"name": "u1", "user": user}],
        "contexts": [{"name": "dev", "context": {"cluster": "c1", "user": "u1"}}],
    }
    path.write_text(yaml.safe_dump(data))
    return path


def script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def exec_user(command: str, *args: str) -> dict:
    return {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": command,
            "args": list(args),
            "interactiveMode": "Never",
        }
    }


def test_missing_exec_plugin_raises_naming_file_user_and_command(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    path = write_kubeconfig(
        tmp_path / "config",
        cluster={"server": "https://127.0.0.1:6443"},
        user=exec_user("kubectrl-no-such-plugin"),
    )
    with pytest.raises(ConfigError) as info:
        load_kubeconfig(path)
    msg = str(info.value)
    assert str(path) in msg
    assert "'u1'" in msg
    assert "kubectrl-no-such-plugin" in msg
    assert "not found" in msg


def test_failing_exec_plugin_raises_and_its_stderr_reaches_no_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    plugin = script(tmp_path, "login.sh", f"echo 'login failed for {SECRET}' >&2\nexit 1\n")
    caplog.set_level(logging.DEBUG)
    path = write_kubeconfig(
        tmp_path / "config",
        cluster={"server": "https://127.0.0.1:6443"},
        user=exec_user(str(plugin)),
    )
    with pytest.raises(ConfigError) as info:
        load_kubeconfig(path)
    msg = str(info.value)
    assert str(path) in msg
    assert "'u1'" in msg
    assert str(plugin) in msg
    assert "exit code 1" in msg
    assert SECRET not in msg
    assert SECRET not in caplog.text
    for record in caplog.records:
        assert SECRET not in record.getMessage()
        assert SECRET not in json.dumps(record.__dict__, default=str)


async def test_exec_plugin_that_starts_failing_fails_the_request_not_anonymous(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """After a 401 the plugin runs again (client-go's maybeRefreshCreds); when it fails then,
    the request fails with ConfigError instead of going out without credentials."""
    flag = tmp_path / "broken"
    plugin = script(
        tmp_path,
        "plugin.sh",
        f'if [ -e "{flag}" ]; then echo "{SECRET}" >&2; exit 3; fi\n'
        'echo \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",'
        f'"status":{{"token":"{TOKEN}"}}}}\'\n',
    )
    seen: list[str] = []

    async def handler(request: Request, writer: asyncio.StreamWriter) -> None:
        seen.append(request.headers.get("authorization", ""))
        flag.write_text("")
        writer.write(json_response(401, {"kind": "Status", "code": 401, "reason": "Unauthorized"}))
        await writer.drain()

    caplog.set_level(logging.DEBUG)
    async with loopback(handler) as server:
        path = write_kubeconfig(
            tmp_path / "config", cluster={"server": server.url}, user=exec_user(str(plugin))
        )
        config = load_kubeconfig(path)
        async with AsyncClient(config.with_options(rate_limit=None)) as client:
            with pytest.raises(ConfigError, match="exit code 3") as info:
                await client.get(CONFIGMAPS, "a", namespace="ns")
    assert seen == [f"Bearer {TOKEN}"]  # nothing was sent without the token
    assert "'u1'" in str(info.value)
    assert SECRET not in caplog.text


def test_exec_plugin_gets_exec_info_and_relative_command_resolves_next_to_kubeconfig(
    tmp_path: Path,
) -> None:
    (tmp_path / "bin").mkdir()
    script(
        tmp_path / "bin",
        "plugin.sh",
        'test "$EXTRA" = yes || exit 7\n'
        'case "$KUBERNETES_EXEC_INFO" in *\'"interactive": false\'*) ;; *) exit 8;; esac\n'
        'echo \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",'
        f'"status":{{"token":"{TOKEN}"}}}}\'\n',
    )
    user = exec_user("./bin/plugin.sh")
    user["exec"]["env"] = [{"name": "EXTRA", "value": "yes"}]
    path = write_kubeconfig(tmp_path / "config", cluster={"server": "https://k:6443"}, user=user)
    config = load_kubeconfig(path)
    assert config.credentials is not None
    assert config.credentials.authorization() == f"Bearer {TOKEN}"
    assert TOKEN not in repr(config)


def test_exec_plugin_interactive_always_is_rejected_at_load(tmp_path: Path) -> None:
    user = exec_user("true")
    user["exec"]["interactiveMode"] = "Always"
    path = write_kubeconfig(tmp_path / "config", cluster={"server": "https://k:6443"}, user=user)
    with pytest.raises(ConfigError, match=r"users\[name=u1\]\.user\.exec\.interactiveMode"):
        load_kubeconfig(path)


def test_ca_data_that_is_not_a_certificate_names_file_and_field(tmp_path: Path) -> None:
    bogus = base64.b64encode(b"this is base64 but not a certificate").decode()
    path = write_kubeconfig(
        tmp_path / "config",
        cluster={"server": "https://127.0.0.1:6443", "certificate-authority-data": bogus},
        user={"token": "t"},
    )
    with pytest.raises(ConfigError) as info:
        load_kubeconfig(path)
    msg = str(info.value)
    assert str(path) in msg
    assert "clusters[name=c1].cluster.certificate-authority-data" in msg


@pytest.mark.parametrize(
    "server", ["not a url", "127.0.0.1:6443", "ftp://example.com", "https://", "https://h:port"]
)
def test_server_that_is_not_an_http_url_is_rejected_at_load(tmp_path: Path, server: str) -> None:
    path = write_kubeconfig(tmp_path / "config", cluster={"server": server}, user={"token": "t"})
    with pytest.raises(ConfigError) as info:
        load_kubeconfig(path)
    assert str(path) in str(info.value)
    assert "clusters[name=c1].cluster.server" in str(info.value)
    assert "not an http(s) URL" in str(info.value)


def _files_containing(directory: Path, needle: bytes) -> list[Path]:
    found = []
    for root, _, files in os.walk(directory):
        for name in files:
            path = Path(root, name)
            try:
                if needle in path.read_bytes():
                    found.append(path)
            except OSError:
                continue
    return found


@pytest.mark.parametrize("memfd", [True, False], ids=["memfd", "tempfile-fallback"])
async def test_client_key_data_never_stays_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, memfd: bool
) -> None:
    ca = CertificateAuthority()
    pair = ca.issue("alice")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    if not memfd:
        monkeypatch.delattr(os, "memfd_create", raising=False)
    path = write_kubeconfig(
        tmp_path / "config",
        cluster={
            "server": "https://127.0.0.1:6443",
            "certificate-authority-data": base64.b64encode(ca.cert_pem).decode(),
        },
        user={
            "client-certificate-data": base64.b64encode(pair.cert_pem).decode(),
            "client-key-data": base64.b64encode(pair.key_pem).decode(),
        },
    )
    config = load_kubeconfig(path)
    assert config.ca_file is None
    assert config.client_key_file is None
    assert config.ssl_context() is not None
    client = AsyncClient(config)
    await client.aclose()
    key_body = pair.key_pem.splitlines()[1]
    assert _files_containing(scratch, key_body) == []
    assert pair.key_pem.decode() not in repr(config)


def test_mismatched_client_certificate_and_key_name_the_fields(tmp_path: Path) -> None:
    ca = CertificateAuthority()
    alice, bob = ca.issue("alice"), ca.issue("bob")
    path = write_kubeconfig(
        tmp_path / "config",
        cluster={"server": "https://127.0.0.1:6443"},
        user={
            "client-certificate-data": base64.b64encode(alice.cert_pem).decode(),
            "client-key-data": base64.b64encode(bob.key_pem).decode(),
        },
    )
    with pytest.raises(ConfigError, match=r"users\[name=u1\]\.user\.client-certificate-data"):
        load_kubeconfig(path)


def test_client_config_built_by_hand_reports_bad_ca_data_as_config_error() -> None:
    config = ClientConfig(server="https://k:6443", ca_data=b"not a certificate")
    with pytest.raises(ConfigError, match="ca_data"):
        config.ssl_context()


def test_exec_credential_is_reused_until_its_expiry_has_passed(tmp_path: Path) -> None:
    """client-go's credsExpired: the cached credential is used while now <= expirationTimestamp
    and the plugin runs again only once now is after it (plugin/pkg/client/auth/exec/exec.go)."""
    calls = tmp_path / "calls"
    plugin = script(
        tmp_path,
        "plugin.sh",
        f'echo x >> "{calls}"\n'
        'n=$(wc -l < "' + str(calls) + '" | tr -d " ")\n'
        'echo "{\\"apiVersion\\":\\"client.authentication.k8s.io/v1\\",'
        '\\"kind\\":\\"ExecCredential\\",\\"status\\":{\\"token\\":\\"t$n\\",'
        '\\"expirationTimestamp\\":\\"2030-01-01T00:00:00Z\\"}}"\n',
    )
    expiry = 1893456000.0  # 2030-01-01T00:00:00Z
    now = [expiry - 60]
    source = ExecCredentials(
        ExecPlugin.from_kubeconfig(
            exec_user(str(plugin))["exec"],
            path=str(tmp_path / "config"),
            user="u1",
            cluster_info=None,
        ),
        now=lambda: now[0],
    )
    assert source.authorization() == "Bearer t1"
    now[0] = expiry
    assert source.authorization() == "Bearer t1"
    now[0] = expiry + 1
    assert source.authorization() == "Bearer t2"
    now[0] = expiry - 1
    assert source.invalidate()  # after a 401: run again even though not expired
    assert source.authorization() == "Bearer t3"
