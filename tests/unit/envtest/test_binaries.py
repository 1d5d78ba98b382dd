"""Binary resolution order and its error messages (no binaries are run)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from kubectrl.envtest import BinaryNotFoundError
from kubectrl.envtest._binaries import ETCD, KUBE_APISERVER, cached_path, find_binary

ENV_VARS = ("TEST_ASSET_KUBE_APISERVER", "TEST_ASSET_ETCD", "KUBEBUILDER_ASSETS")


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KUBECTRL_CACHE_DIR", str(tmp_path / "cache"))
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


def fake_binary(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_pins_are_read_from_the_shipped_go_modules() -> None:
    assert KUBE_APISERVER.version().startswith("v1.")
    minor = int(KUBE_APISERVER.version().split(".")[1])
    assert minor >= 34
    assert ETCD.version().startswith(("v3.5.", "v3.6."))
    gomod = KUBE_APISERVER.gomod_files()["go.mod"].decode()
    # Every k8s.io staging module is pinned to the matching v0.x.y.
    staging = f"v0.{minor}.{KUBE_APISERVER.version().split('.')[2]}"
    for module in ("k8s.io/api", "k8s.io/apimachinery", "k8s.io/apiserver", "k8s.io/client-go"):
        assert f"{module} => {module} {staging}" in gomod


def test_explicit_env_var_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    explicit = fake_binary(tmp_path / "explicit" / "kube-apiserver")
    fake_binary(tmp_path / "assets" / "kube-apiserver")
    monkeypatch.setenv("TEST_ASSET_KUBE_APISERVER", str(explicit))
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(tmp_path / "assets"))
    assert find_binary(KUBE_APISERVER, build=False) == (explicit, "$TEST_ASSET_KUBE_APISERVER")


def test_kubebuilder_assets_before_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assets = fake_binary(tmp_path / "assets" / "etcd")
    on_path = fake_binary(tmp_path / "bin" / "etcd")
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(assets.parent))
    monkeypatch.setenv("PATH", str(on_path.parent))
    assert find_binary(ETCD, build=False) == (assets, "$KUBEBUILDER_ASSETS")


def test_path_before_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    on_path = fake_binary(tmp_path / "bin" / "etcd")
    fake_binary(cached_path(ETCD))
    monkeypatch.setenv("PATH", str(on_path.parent))
    assert find_binary(ETCD, build=False) == (on_path, "PATH")


def test_cache_is_used_when_nothing_else_is_set() -> None:
    cached = fake_binary(cached_path(ETCD))
    assert find_binary(ETCD, build=False) == (cached, "cache")


def test_env_var_pointing_at_nothing_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_ASSET_ETCD", "/nonexistent/etcd")
    with pytest.raises(BinaryNotFoundError, match=r"TEST_ASSET_ETCD=/nonexistent/etcd"):
        find_binary(ETCD, build=False)


def test_kubebuilder_assets_without_the_binary_is_an_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(tmp_path))
    with pytest.raises(BinaryNotFoundError, match=r"KUBEBUILDER_ASSETS=.* has no executable"):
        find_binary(KUBE_APISERVER, build=False)


def test_nothing_found_lists_what_was_tried_and_what_to_install() -> None:
    with pytest.raises(BinaryNotFoundError) as failure:
        find_binary(KUBE_APISERVER, build=True)  # no `go` on the emptied PATH
    message = str(failure.value)
    for tried in (
        "$TEST_ASSET_KUBE_APISERVER",
        "$KUBEBUILDER_ASSETS",
        "PATH",
        "cache",
        "no `go` on PATH",
    ):
        assert tried in message
    assert "Install Go" in message
    assert KUBE_APISERVER.version() in message
