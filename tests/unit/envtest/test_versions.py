"""Choosing the Kubernetes version, its feature gates, and the skew check of the built-in tables."""

from __future__ import annotations

import pytest

from kubectrl import _builtin_schemas
from kubectrl.apiserver import KUBERNETES_VERSION
from kubectrl.envtest import DEFAULT_VERSION, SUPPORTED_VERSIONS, ControlPlane, LocalCluster
from kubectrl.envtest._binaries import VERSION_ENV, normalize_version
from kubectrl.testing import FakeAPI, VersionSkew, version_skew


@pytest.fixture(autouse=True)
def no_version_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(VERSION_ENV, raising=False)


def test_the_version_comes_from_the_argument_then_the_environment_then_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert ControlPlane().version == DEFAULT_VERSION
    assert set(SUPPORTED_VERSIONS) == {"1.35", "1.36", "1.37"}
    monkeypatch.setenv(VERSION_ENV, "1.35.x")
    assert ControlPlane().version == "1.35"
    assert ControlPlane(version="v1.37.2").version == "1.37"
    monkeypatch.setenv(VERSION_ENV, "1.99")
    with pytest.raises(ValueError, match=r"Kubernetes 1\.99 is not supported"):
        normalize_version(None)


def test_a_feature_gate_the_version_lacks_is_refused_by_name() -> None:
    """ShardedListAndWatch is new in 1.36 (kubernetes pkg/features/kube_features.go, KEP-5866);
    kube-apiserver 1.35 exits on an unknown gate, so it is refused before starting."""
    with pytest.raises(ValueError, match=r"ShardedListAndWatch needs Kubernetes >= 1\.36.*1\.35"):
        ControlPlane(version="1.35", feature_gates={"ShardedListAndWatch": True})
    # 1.37 has it.
    assert ControlPlane(version="1.37", feature_gates={"ShardedListAndWatch": True}).feature_gates


@pytest.mark.parametrize(
    ("version", "gates"),
    [
        ("1.35", {}),
        ("1.36", {"ShardedListAndWatch": True}),
        ("1.37", {"ShardedListAndWatch": True}),
    ],
)
def test_the_cluster_turns_on_the_gates_each_version_has(
    version: str, gates: dict[str, bool]
) -> None:
    assert LocalCluster(version=version).feature_gates == gates


def test_the_tables_say_their_version() -> None:
    assert _builtin_schemas.server_version() == KUBERNETES_VERSION
    skew = version_skew(KUBERNETES_VERSION)
    assert skew.fake_api == KUBERNETES_VERSION
    assert skew.models.startswith("v1.")
    assert skew.problems() == []


async def test_fakeapis_version_endpoint_says_its_tables_version() -> None:
    from kubectrl.client import AsyncClient

    async with AsyncClient(FakeAPI().config()) as client:
        info = await client.server_version()
    assert info["gitVersion"] == f"{KUBERNETES_VERSION}-fake"
    assert info["minor"] == KUBERNETES_VERSION.split(".")[1]


def test_a_server_of_another_minor_is_a_problem_named_per_component() -> None:
    skew = VersionSkew(server="v1.37.2", fake_api="v1.36.3", schemas="v1.36.3", models="v1.37")
    assert skew.problems() == [
        "FakeAPI's tables are v1.36.3, the apiserver is v1.37.2",
        "the schemas are v1.36.3, the apiserver is v1.37.2",
    ]
    far = VersionSkew(server="v1.35.4", fake_api="v1.35.4", schemas="v1.35.4", models="v1.37")
    (line,) = far.problems()
    assert "models are v1.37, more than one minor from the apiserver's v1.35.4" in line
    assert VersionSkew("garbage", "v1.36.3", "v1.36.3", "").problems() == [
        "the server's version 'garbage' is not of the form v1.36.3"
    ]


def test_nox_runs_the_contract_suite_on_every_supported_version() -> None:
    import ast
    from pathlib import Path

    tree = ast.parse((Path(__file__).resolve().parents[3] / "noxfile.py").read_text())
    values = {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id in {"KUBERNETES_VERSIONS", "TABLES_VERSION"}
    }
    assert tuple(values["KUBERNETES_VERSIONS"]) == SUPPORTED_VERSIONS
    assert values["TABLES_VERSION"] == ".".join(KUBERNETES_VERSION.lstrip("v").split(".")[:2])
    sessions = {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("contract_")
    }
    assert sorted(sessions) == [f"contract_{v.replace('.', '_')}" for v in SUPPORTED_VERSIONS]
