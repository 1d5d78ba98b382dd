"""Kubeconfig and in-cluster loading: clear errors, no secrets, rotation, exec plugins."""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from client_loopback import CONFIGMAPS, Request, json_response, loopback

from kubectrl.client import (
    AsyncClient,
    BlockingClient,
    load_config,
    load_incluster_config,
    load_kubeconfig,
)
from kubectrl.errors import ConfigError

TOKEN = "s3cr3t-t0ken-abcdef0123456789"
PASSWORD = "hunter2-password-xyz"


def write_kubeconfig(
    path: Path,
    *,
    server: str = "https://127.0.0.1:6443",
    user: dict | None = None,
    cluster_extra: dict | None = None,
    context: str = "dev",
) -> Path:
    data = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": context,
        "clusters": [{"name": "c1", "cluster": {"server": server, **(cluster_extra or {})}}],
        "users": [{"name": "u1", "user": user if user is not None else {"token": TOKEN}}],
        "contexts": [
            {"name": context, "context": {"cluster": "c1", "user": "u1", "namespace": "team"}}
        ],
    }
    path.write_text(yaml.safe_dump(data))
    return path


def test_loads_token_namespace_and_verifies_tls_by_default(tmp_path: Path) -> None:
    config = load_kubeconfig(write_kubeconfig(tmp_path / "config"))
    assert config.server == "https://127.0.0.1:6443"
    assert config.namespace == "team"
    assert config.insecure_skip_tls_verify is False
    assert config.ssl_context().verify_mode.name == "CERT_REQUIRED"
    assert config.credentials is not None
    assert config.credentials.authorization() == f"Bearer {TOKEN}"
    assert TOKEN not in repr(config)
    assert TOKEN not in repr(config.credentials)
    assert TOKEN not in repr(config.auth())


def test_insecure_only_when_the_kubeconfig_says_so(tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path / "c", cluster_extra={"insecure-skip-tls-verify": True})
    config = load_kubeconfig(path)
    assert config.insecure_skip_tls_verify
    assert config.ssl_context().verify_mode.name == "CERT_NONE"


def test_proxy_and_tls_server_name(tmp_path: Path) -> None:
    path = write_kubeconfig(
        tmp_path / "c", cluster_extra={"proxy-url": "http://proxy:3128", "tls-server-name": "kube"}
    )
    config = load_kubeconfig(path)
    assert config.proxy == "http://proxy:3128"
    assert config.request_extensions() == {"sni_hostname": "kube"}


def test_missing_file_names_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError) as info:
        load_kubeconfig(missing)
    assert str(missing) in str(info.value)
    assert "does not exist" in str(info.value)


def test_unknown_context_names_file_field_and_known_contexts(tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path / "config")
    with pytest.raises(ConfigError) as info:
        load_kubeconfig(path, context="prod")
    msg = str(info.value)
    assert str(path) in msg
    assert "contexts" in msg
    assert "'prod'" in msg
    assert "known: dev" in msg


def test_malformed_yaml_names_file_and_line_without_quoting_content(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(f"users:\n- name: u\n  user:\n    token: {TOKEN}\n  bad: [unclosed\n")
    with pytest.raises(ConfigError) as info:
        load_kubeconfig(path)
    msg = str(info.value)
    assert str(path) in msg
    assert "malformed YAML at line" in msg
    assert TOKEN not in msg


def test_missing_ca_file_names_file_and_field(tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path / "config", cluster_extra={"certificate-authority": "ca.crt"})
    with pytest.raises(ConfigError) as info:
        load_kubeconfig(path)
    msg = str(info.value)
    assert str(path) in msg
    assert "clusters[name=c1].cluster.certificate-authority" in msg
    assert str(tmp_path / "ca.crt") in msg


def test_missing_client_key_and_bad_base64(tmp_path: Path) -> None:
    path = write_kubeconfig(
        tmp_path / "config", user={"client-certificate": "c.crt", "client-key": "c.key"}
    )
    (tmp_path / "c.crt").write_text("x")
    with pytest.raises(ConfigError, match=r"users\[name=u1\]\.user\.client-key"):
        load_kubeconfig(path)
    path = write_kubeconfig(tmp_path / "config2", user={"client-key-data": "!!not base64!!"})
    with pytest.raises(ConfigError, match="client-key-data: is not valid base64"):
        load_kubeconfig(path)


def test_unknown_cluster_and_missing_server(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(
        yaml.safe_dump(
            {
                "current-context": "x",
                "contexts": [{"name": "x", "context": {"cluster": "ghost"}}],
            }
        )
    )
    with pytest.raises(ConfigError, match=r"contexts\[name=x\]\.context\.cluster"):
        load_kubeconfig(path)
    path.write_text(
        yaml.safe_dump(
            {
                "current-context": "x",
                "clusters": [{"name": "c", "cluster": {}}],
                "contexts": [{"name": "x", "context": {"cluster": "c"}}],
            }
        )
    )
    with pytest.raises(ConfigError, match=r"clusters\[name=c\]\.cluster\.server: is missing"):
        load_kubeconfig(path)


def test_kubeconfig_env_with_several_files_merges_first_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = write_kubeconfig(tmp_path / "a", server="https://first:1", context="one")
    second = tmp_path / "b"
    second.write_text(
        yaml.safe_dump(
            {
                "current-context": "two",
                "clusters": [
                    {"name": "c1", "cluster": {"server": "https://ignored:2"}},
                    {"name": "c2", "cluster": {"server": "https://second:2"}},
                ],
                "contexts": [{"name": "two", "context": {"cluster": "c2"}}],
            }
        )
    )
    monkeypatch.setenv(
        "KUBECONFIG", os.pathsep.join([str(first), str(tmp_path / "missing"), str(second)])
    )
    assert load_config().server == "https://first:1"  # current-context from the first file
    two = load_config(context="two")
    assert two.server == "https://second:2"
    assert two.credentials is None


def test_token_file_is_reread_when_it_changes(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("first-token\n")
    path = write_kubeconfig(tmp_path / "config", user={"tokenFile": "token"})
    config = load_kubeconfig(path)
    assert config.credentials is not None
    assert config.credentials.authorization() == "Bearer first-token"
    replacement = tmp_path / "token.new"
    replacement.write_text("second-token-longer\n")
    os.replace(replacement, token_file)  # the kubelet's atomic swap
    assert config.credentials.authorization() == "Bearer second-token-longer"


def test_in_cluster_config_and_token_rotation(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("sa-token-1")
    (tmp_path / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\n")
    (tmp_path / "namespace").write_text("controllers\n")
    config = load_incluster_config(
        token_file=str(tmp_path / "token"),
        ca_file=str(tmp_path / "ca.crt"),
        namespace_file=str(tmp_path / "namespace"),
        environ={"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"},
    )
    assert config.server == "https://10.0.0.1:443"
    assert config.namespace == "controllers"
    assert config.credentials is not None
    assert config.credentials.authorization() == "Bearer sa-token-1"
    new = tmp_path / "t2"
    new.write_text("sa-token-2-rotated")
    os.replace(new, tmp_path / "token")
    assert config.credentials.authorization() == "Bearer sa-token-2-rotated"
    with pytest.raises(ConfigError, match="in-cluster"):
        load_incluster_config(token_file=str(tmp_path / "token"), environ={})


def _exec_plugin(tmp_path: Path) -> Path:
    counter = tmp_path / "calls"
    script = tmp_path / "plugin.py"
    script.write_text(
        textwrap.dedent(f"""
        import json, pathlib
        p = pathlib.Path({str(counter)!r})
        n = int(p.read_text()) + 1 if p.exists() else 1
        p.write_text(str(n))
        EXPIRED, FUTURE = "2000-01-01T00:00:00Z", "2999-01-01T00:00:00Z"
        print(json.dumps({{
            "apiVersion": "client.authentication.k8s.io/v1",
            "kind": "ExecCredential",
            "status": {{"token": "exec-token-%d-{TOKEN}" % n,
                        "expirationTimestamp": EXPIRED if n == 1 else FUTURE}},
        }}))
    """)
    )
    return script


async def test_exec_plugin_token_refreshed_on_expiry_and_never_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    script = _exec_plugin(tmp_path)
    seen: list[str] = []

    async def handler(request: Request, writer: asyncio.StreamWriter) -> None:
        seen.append(request.headers.get("authorization", ""))
        writer.write(json_response(200, {"kind": "ConfigMap", "metadata": {"name": "a"}}))
        await writer.drain()

    caplog.set_level(logging.DEBUG)
    async with loopback(handler) as server:
        path = write_kubeconfig(
            tmp_path / "config",
            server=server.url,
            user={
                "exec": {
                    "apiVersion": "client.authentication.k8s.io/v1",
                    "command": sys.executable,
                    "args": [str(script)],
                    "interactiveMode": "Never",
                },
            },
        )
        config = load_kubeconfig(path)
        async with AsyncClient(config) as client:
            await client.get(CONFIGMAPS, "a", namespace="ns")
            await client.get(CONFIGMAPS, "a", namespace="ns")
    # The loader ran the plugin once (already expired), the refresh hook once more.
    assert seen[0] == f"Bearer exec-token-2-{TOKEN}"
    assert seen[1] == seen[0]
    assert (tmp_path / "calls").read_text() == "2"
    assert TOKEN not in caplog.text
    assert TOKEN not in repr(config)


async def test_401_rereads_the_token_file_once(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("old")
    seen: list[str] = []

    async def handler(request: Request, writer: asyncio.StreamWriter) -> None:
        auth = request.headers.get("authorization", "")
        seen.append(auth)
        if auth == "Bearer old":
            token_file.write_text("new-token")  # rotated while the request was in flight
            writer.write(
                json_response(401, {"kind": "Status", "code": 401, "reason": "Unauthorized"})
            )
        else:
            writer.write(json_response(200, {"kind": "ConfigMap", "metadata": {"name": "a"}}))
        await writer.drain()

    async with loopback(handler) as server:
        config = load_kubeconfig(
            write_kubeconfig(tmp_path / "c", server=server.url, user={"tokenFile": "token"})
        )
        async with AsyncClient(config) as client:
            await client.get(CONFIGMAPS, "a", namespace="ns")
    assert seen == ["Bearer old", "Bearer new-token"]


def test_blocking_client_logs_no_secret(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    key_material = base64.b64encode(b"-----BEGIN PRIVATE KEY-----fake").decode()

    async def handler(request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(
            json_response(
                403,
                {
                    "kind": "Status",
                    "code": 403,
                    "reason": "Forbidden",
                    "message": "configmaps is forbidden",
                },
            )
        )
        await writer.drain()

    async def serve_and_call() -> None:
        async with loopback(handler) as server:
            path = write_kubeconfig(
                tmp_path / "config",
                server=server.url,
                user={"username": "admin", "password": PASSWORD},
            )
            config = load_kubeconfig(path)
            assert PASSWORD not in repr(config)
            assert key_material not in repr(config)

            def call() -> str:
                with BlockingClient(config) as client:
                    try:
                        client.get(CONFIGMAPS, "a", namespace="ns")
                    except Exception as err:
                        return str(err)
                return ""

            message = await asyncio.to_thread(call)
            assert "forbidden" in message
            assert PASSWORD not in message

    caplog.set_level(logging.DEBUG)
    asyncio.run(serve_and_call())
    assert PASSWORD not in caplog.text
    assert base64.b64encode(f"admin:{PASSWORD}".encode()).decode() not in caplog.text
