"""Providers: clusters appear, change and disappear while they run; bad input is reported.

Upstream semantics: multicluster-runtime ``providers/kubeconfig/provider.go`` (Secrets labelled
``sigs.k8s.io/multicluster-runtime-kubeconfig=true``, key ``kubeconfig``, cluster named after
the Secret, a changed kubeconfig re-engages, a deleted Secret disengages),
``providers/cluster-api/provider.go`` (``<cluster>-kubeconfig``, key ``value``),
``providers/cluster-inventory-api`` (``ControlPlaneHealthy``, consumer-labelled Secret, key
``Config``, cluster ``<namespace>/<name>``), ``providers/file`` (kubeconfig files).
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

import pytest

from kubectrl.client import AsyncClient, ClientConfig
from kubectrl.errors import ConfigError
from kubectrl.multicluster import (
    ClusterProfileProvider,
    DirectoryProvider,
    KubeconfigProvider,
    SecretProvider,
    StaticProvider,
)
from kubectrl.testing import FakeAPI, eventually

HERE = Path(__file__).parent


def text(server: str, extra_user: str = "token: abc") -> str:
    return f"""
clusters: [{{name: c, cluster: {{server: "{server}"}}}}]
users: [{{name: u, user: {{{extra_user}}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
"""


class Recorder:
    """An Aware that records what a provider asked for."""

    def __init__(self) -> None:
        self.engaged: dict[str, ClientConfig] = {}
        self.calls: list[tuple[str, str]] = []

    async def engage(self, name: str, config: ClientConfig) -> None:
        self.engaged[name] = config
        self.calls.append(("engage", name))

    async def disengage(self, name: str) -> None:
        self.engaged.pop(name, None)
        self.calls.append(("disengage", name))


@pytest.mark.asyncio
async def test_static_provider_adds_replaces_and_removes() -> None:
    first, second = FakeAPI().config(), FakeAPI().config()
    provider = StaticProvider({"a": first})
    aware = Recorder()
    await provider.sync_once(aware)
    assert aware.engaged == {"a": first}
    provider.add("a", second)
    provider.add("b", first)
    await provider.sync_once(aware)
    assert aware.engaged == {"a": second, "b": first}
    provider.remove("a")
    await provider.sync_once(aware)
    assert aware.calls == [("engage", "a"), ("engage", "a"), ("engage", "b"), ("disengage", "a")]
    with pytest.raises(KeyError, match="'zzz'"):
        provider.remove("zzz")
    with pytest.raises(TypeError, match="ClientConfig"):
        provider.add("c", "not a config")  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_directory_provider_follows_files_and_keeps_a_cluster_over_a_bad_edit(
    tmp_path: Path,
) -> None:
    provider = DirectoryProvider(tmp_path, suffix=".kubeconfig")
    aware = Recorder()
    (tmp_path / "east.kubeconfig").write_text(text("https://east:6443"))
    (tmp_path / "notes.txt").write_text("not a cluster")
    (tmp_path / ".hidden.kubeconfig").write_text(text("https://hidden:6443"))
    await provider.sync_once(aware)
    assert {n: c.server for n, c in aware.engaged.items()} == {"east": "https://east:6443"}

    # A changed file re-engages; an unchanged pass does nothing.
    (tmp_path / "east.kubeconfig").write_text(text("https://east2:6443"))
    await provider.sync_once(aware)
    await provider.sync_once(aware)
    assert aware.calls == [("engage", "east"), ("engage", "east")]
    assert aware.engaged["east"].server == "https://east2:6443"

    # A hostile edit is refused, reported naming the file and field, and east stays engaged.
    (tmp_path / "east.kubeconfig").write_text(text("https://evil:6443", "tokenFile: /etc/shadow"))
    await provider.sync_once(aware)
    assert aware.engaged["east"].server == "https://east2:6443"
    assert "east.kubeconfig: users[name=u].user.tokenFile" in provider.errors["east"]

    # Removed: disengaged, and its error forgotten.
    (tmp_path / "east.kubeconfig").unlink()
    await provider.sync_once(aware)
    assert aware.engaged == {}
    assert provider.errors == {}


@pytest.mark.asyncio
async def test_kubeconfig_provider_engages_each_context(tmp_path: Path) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text("""
clusters:
- {name: c1, cluster: {server: "https://one:6443"}}
- {name: c2, cluster: {server: "https://two:6443"}}
users: [{name: u, user: {token: abc}}]
contexts:
- {name: one, context: {cluster: c1, user: u}}
- {name: two, context: {cluster: c2, user: u}}
""")
    aware = Recorder()
    await KubeconfigProvider(path).sync_once(aware)
    assert {n: c.server for n, c in aware.engaged.items()} == {
        "one": "https://one:6443",
        "two": "https://two:6443",
    }
    only = KubeconfigProvider(path, contexts=["two", "three"])
    aware = Recorder()
    await only.sync_once(aware)
    assert set(aware.engaged) == {"two"}
    assert "no context named 'three'" in only.errors["three"]


def secret(name: str, data: dict[str, str], labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": "fleet", "labels": labels},
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
    }


async def run_provider(provider: Any, aware: Recorder) -> asyncio.Task[None]:
    return asyncio.create_task(provider.run(aware))


@pytest.mark.asyncio
async def test_secret_provider_follows_labelled_secrets() -> None:
    api = FakeAPI()
    api.seed({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fleet"}})
    label = {"sigs.k8s.io/multicluster-runtime-kubeconfig": "true"}
    api.seed(
        secret("east", {"kubeconfig": text("https://east:6443")}, label),
        secret("unlabelled", {"kubeconfig": text("https://x:6443")}, {}),
        secret("nokey", {"other": "x"}, label),
    )
    aware = Recorder()
    async with AsyncClient(api.config()) as client:
        provider = SecretProvider(client, "fleet")
        task = await run_provider(provider, aware)
        try:
            await eventually(lambda: set(aware.engaged) == {"east"})
            assert (
                "secret fleet/nokey: data.kubeconfig: has no kubeconfig (keys: other)"
                in (provider.errors["nokey"])
            )
            await client.patch(
                ("v1", "Secret"),
                "east",
                {
                    "data": {
                        "kubeconfig": base64.b64encode(text("https://east2:6443").encode()).decode()
                    }
                },
                namespace="fleet",
            )
            await eventually(
                lambda: (
                    aware.engaged.get("east")
                    and aware.engaged["east"].server == "https://east2:6443"
                )
            )
            await client.create(
                secret("evil", {"kubeconfig": text("https://e:1", "exec: {command: sh}")}, label)
            )
            await eventually(lambda: "evil" in provider.errors)
            assert (
                "secret fleet/evil data.kubeconfig: users[name=u].user.exec"
                in provider.errors["evil"]
            )
            await client.delete(("v1", "Secret"), "east", namespace="fleet")
            await eventually(lambda: aware.engaged == {})
        finally:
            task.cancel()
            await asyncio.wait({task})


@pytest.mark.asyncio
async def test_cluster_api_secrets_are_named_after_the_cluster() -> None:
    api = FakeAPI()
    api.seed({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fleet"}})
    capi = {"cluster.x-k8s.io/cluster-name": "prod"}
    api.seed(
        secret("prod-kubeconfig", {"value": text("https://prod:6443")}, capi),
        secret("prod-ca", {"tls.crt": "x"}, capi),  # another CAPI secret of the cluster
    )
    aware = Recorder()
    async with AsyncClient(api.config()) as client:
        task = await run_provider(SecretProvider.cluster_api(client, "fleet"), aware)
        try:
            await eventually(lambda: set(aware.engaged) == {"prod"})
            assert aware.engaged["prod"].server == "https://prod:6443"
        finally:
            task.cancel()
            await asyncio.wait({task})


def profile(name: str, healthy: bool, **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "multicluster.x-k8s.io/v1alpha1",
        "kind": "ClusterProfile",
        "metadata": {"name": name, "namespace": "fleet"},
        "spec": {"displayName": name},
        "status": {
            "conditions": [
                {
                    "type": "ControlPlaneHealthy",
                    "status": "True" if healthy else "False",
                    "reason": "R",
                    "message": "",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ],
            **status,
        },
    }


@pytest.mark.asyncio
async def test_cluster_profiles_engage_when_healthy_with_one_secret() -> None:
    api = FakeAPI()
    api.install_crd(HERE / "clusterprofile-crd.yaml")
    api.seed({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fleet"}})
    consumer = {"x-k8s.io/cluster-inventory-consumer": "copier"}
    api.seed(
        profile("good", True),
        profile("sick", False),
        profile("plugins", True, accessProviders=[{"name": "token-exchange"}]),
        secret(
            "good-kc",
            {"Config": text("https://good:6443")},
            {**consumer, "x-k8s.io/cluster-profile": "good"},
        ),
        secret(
            "sick-kc",
            {"Config": text("https://sick:6443")},
            {**consumer, "x-k8s.io/cluster-profile": "sick"},
        ),
    )
    aware = Recorder()
    async with AsyncClient(api.config()) as client:
        provider = ClusterProfileProvider(client, "fleet", consumer="copier")
        task = await run_provider(provider, aware)
        try:
            await eventually(lambda: set(aware.engaged) == {"fleet/good"})
            assert "access providers" in provider.errors["fleet/plugins"]
            await client.create(
                secret(
                    "good-kc2",
                    {"Config": text("https://x:6443")},
                    {**consumer, "x-k8s.io/cluster-profile": "good"},
                )
            )
            await eventually(lambda: "fleet/good" in provider.errors)
            assert "2 kubeconfig Secrets (good-kc, good-kc2)" in provider.errors["fleet/good"]
        finally:
            task.cancel()
            await asyncio.wait({task})


@pytest.mark.asyncio
async def test_cluster_profile_provider_without_the_crd_says_so() -> None:
    async with AsyncClient(FakeAPI().config()) as client:
        provider = ClusterProfileProvider(client, "fleet", consumer="copier")
        with pytest.raises(ConfigError, match="ClusterProfile CRD"):
            await provider.run(Recorder())


@pytest.mark.asyncio
async def test_an_unreadable_source_fails_at_first_and_is_survived_later(tmp_path: Path) -> None:
    path = tmp_path / "fleet.yaml"
    provider = KubeconfigProvider(path)
    with pytest.raises(ConfigError, match=r"fleet\.yaml: cannot read kubeconfig"):
        await provider.sync_once(Recorder())
    path.write_text(text("https://one:6443"))
    aware = Recorder()
    await provider.sync_once(aware)
    assert set(aware.engaged) == {"x"}
    path.unlink()  # being rewritten: the cluster stays, the error is reported
    await provider.sync_once(aware)
    assert set(aware.engaged) == {"x"}
    assert "cannot read kubeconfig" in provider.last_error
    path.write_text(text("https://one:6443"))
    await provider.sync_once(aware)
    assert provider.last_error == ""
