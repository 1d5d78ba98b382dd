"""Binary resolution order and its error messages (no binaries are run)."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from kubectrl.envtest import BinaryNotFoundError, _binaries
from kubectrl.envtest._binaries import (
    ALL_SPECS,
    DEFAULT_VERSION,
    ETCD,
    KUBE_APISERVER,
    KUBE_SCHEDULER,
    KUBECTL,
    KWOK,
    SUPPORTED_VERSIONS,
    cached_path,
    find_binaries,
    find_binary,
    normalize_version,
    specs_for,
)

ENV_VARS = (*(spec.env_var for spec in ALL_SPECS), "KUBEBUILDER_ASSETS")


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KUBECTRL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KUBECTRL_ENVTEST_DOWNLOAD", "0")  # test_download.py tests downloads
    monkeypatch.setenv("KUBECTRL_SETUP_ENVTEST_STORE", str(tmp_path / "setup-envtest"))
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


def test_the_kubernetes_module_pins_four_commands_and_kwok_its_own_release() -> None:
    gomod = KUBE_APISERVER.gomod_files()["go.mod"].decode()
    for command in ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl"):
        assert f"k8s.io/kubernetes/cmd/{command}" in gomod
    assert "k8s.io/kubectl => k8s.io/kubectl v0.36.3" in gomod
    assert {spec.gomod_dir for spec in ALL_SPECS if spec.module == "k8s.io/kubernetes"} == {
        "kubernetes-1.36"
    }
    assert KWOK.version() == "v0.8.0"
    # kubectl reads its version from client-go, the servers from component-base.
    flags = KUBECTL.ldflags()
    assert "-X k8s.io/client-go/pkg/version.gitVersion=v1.36.3" in flags
    assert "-X k8s.io/component-base/version.gitVersion=v1.36.3" in flags


def test_kubectl_is_not_taken_from_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Any kubectl on PATH may be far outside the one-minor skew with the pinned apiserver."""
    on_path = fake_binary(tmp_path / "bin" / "kubectl")
    monkeypatch.setenv("PATH", str(on_path.parent))
    with pytest.raises(BinaryNotFoundError, match="PATH: not searched for kubectl"):
        find_binary(KUBECTL, build=False)
    cached = fake_binary(cached_path(KUBECTL))
    assert find_binary(KUBECTL, build=False) == (cached, "cache")
    monkeypatch.setenv("TEST_ASSET_KUBECTL", str(on_path))
    assert find_binary(KUBECTL, build=False) == (on_path, "$TEST_ASSET_KUBECTL")


def test_kubebuilder_assets_without_a_cluster_binary_falls_through(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """setup-envtest's directory has etcd, kube-apiserver and kubectl only."""
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(tmp_path))
    cached = fake_binary(cached_path(KUBE_SCHEDULER))
    assert find_binary(KUBE_SCHEDULER, build=False) == (cached, "cache")


def test_plain_mode_does_not_need_the_cluster_binaries() -> None:
    fake_binary(cached_path(ETCD))
    fake_binary(cached_path(KUBE_APISERVER))
    # (KUBE_APISERVER and the other module-level specs are 1.36's; the default is 1.37)
    plain = find_binaries(build=False, version="1.36")
    assert (plain.kube_scheduler, plain.kwok, plain.kubectl) == (None, None, None)
    assert plain.sources == {"etcd": "cache", "kube-apiserver": "cache"}
    with pytest.raises(BinaryNotFoundError, match=r"cannot find kube-controller-manager v1\.36\.3"):
        find_binaries(build=False, cluster=True, version="1.36")


FAKE_GO = """#!{python}
# A stand-in for `go build -o DIR/ pkg...`: records its arguments, waits until kubectrl has
# reported progress at least once (a file the test's log callback writes), writes one file per
# package into DIR.
import os, sys, time
args = sys.argv[1:]
with open({calls!r}, "a") as calls:
    calls.write(" ".join(args) + "\\n")
deadline = time.monotonic() + 10
while not os.path.exists({progressed!r}) and time.monotonic() < deadline:
    time.sleep(0.01)
out = args[args.index("-o") + 1]
for arg in args:
    if arg.count("/") >= 2 and not arg.startswith("-") and arg != out:
        parts = arg.split("/")  # go names a binary after the last element, not a /vN suffix
        name = parts[-2] if parts[-1][1:].isdigit() and parts[-1][0] == "v" else parts[-1]
        path = os.path.join(out, name)
        with open(path, "w") as binary:
            binary.write("#!/bin/sh\\n")
        os.chmod(path, 0o755)
"""


def test_missing_binaries_of_one_module_are_built_by_one_go_build(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls, progressed = tmp_path / "calls", tmp_path / "progressed"
    go = tmp_path / "gobin" / "go"
    go.parent.mkdir()
    go.write_text(
        FAKE_GO.format(python=sys.executable, calls=str(calls), progressed=str(progressed))
    )
    go.chmod(0o755)
    monkeypatch.setenv("PATH", str(go.parent))
    monkeypatch.setattr(_binaries, "PROGRESS_EVERY", 0.05)
    fake_binary(cached_path(ETCD))
    fake_binary(cached_path(KUBE_APISERVER))
    lines: list[str] = []

    def log(line: str) -> None:
        lines.append(line)
        if "still building" in line:
            progressed.touch()

    found = find_binaries(cluster=True, kubectl=True, log=log, version="1.36")  # 1.36's specs

    invocations = calls.read_text().splitlines()
    assert len(invocations) == 2, invocations  # the kubernetes module once, kwok once
    (kubernetes,) = [c for c in invocations if "k8s.io/kubernetes/cmd/" in c]
    for command in ("kube-controller-manager", "kube-scheduler", "kubectl"):
        assert f"k8s.io/kubernetes/cmd/{command}" in kubernetes
    assert "cmd/kube-apiserver" not in kubernetes  # cached already
    assert found.kube_apiserver_source == "cache"
    for name in ("kube-controller-manager", "kube-scheduler", "kubectl", "kwok"):
        path = found.get(name)
        assert path is not None, name
        assert path.is_file(), name
        assert found.sources[name] == "built"
    assert any("building kube-controller-manager, kube-scheduler, kubectl" in x for x in lines)
    assert any("still building" in x for x in lines)
    # Cached now: a second lookup builds nothing.
    find_binaries(cluster=True, kubectl=True, log=log, version="1.36")
    assert len(calls.read_text().splitlines()) == 2


def test_a_module_with_a_major_version_suffix_is_cached_under_the_binary_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`go build -o DIR/ go.etcd.io/etcd/server/v3` writes DIR/server; the cache says etcd."""
    progressed = tmp_path / "progressed"
    progressed.touch()
    go = tmp_path / "gobin" / "go"
    go.parent.mkdir()
    go.write_text(
        FAKE_GO.format(
            python=sys.executable, calls=str(tmp_path / "calls"), progressed=str(progressed)
        )
    )
    go.chmod(0o755)
    monkeypatch.setenv("PATH", str(go.parent))
    path, source = find_binary(ETCD, build=True, log=lambda line: None)
    assert (path, source) == (cached_path(ETCD), "built")
    assert path.name == "etcd"


@pytest.mark.parametrize(
    ("asked", "minor", "pinned"),
    [("1.35", "1.35", "v1.35.4"), ("1.36.x", "1.36", "v1.36.3"), ("v1.37.2", "1.37", "v1.37.2")],
)
def test_each_supported_version_has_its_own_pins_and_cache_entry(
    asked: str, minor: str, pinned: str
) -> None:
    """As ``setup-envtest use 1.37.x`` (controller-runtime tools/setup-envtest/versions/parse.go):
    a minor, a ``.x`` wildcard or the exact patch picks one pinned release."""
    assert normalize_version(asked) == minor
    specs = {spec.name: spec for spec in specs_for(asked)}
    apiserver = specs["kube-apiserver"]
    assert apiserver.gomod_dir == f"kubernetes-{minor}"
    assert apiserver.version() == pinned
    gomod = apiserver.gomod_files()["go.mod"].decode()
    assert f"k8s.io/kubectl => k8s.io/kubectl v0.{pinned[3:]}" in gomod
    assert f"gitVersion={pinned}" in specs["kubectl"].ldflags()
    assert specs["etcd"] == ETCD
    # The cache key changes with the pins, so versions live side by side.
    assert f"kube-apiserver-{pinned}-" in str(cached_path(apiserver))


def test_cache_entries_of_the_three_versions_differ() -> None:
    paths = {cached_path(specs_for(v)[1]) for v in SUPPORTED_VERSIONS}
    assert len(paths) == len(SUPPORTED_VERSIONS)
    assert DEFAULT_VERSION in SUPPORTED_VERSIONS


@pytest.mark.parametrize(
    ("asked", "says"),
    [("1.34", "not supported"), ("latest", "not of the form"), ("1.37.1", "not the pinned patch")],
)
def test_an_unsupported_version_is_refused_by_name(asked: str, says: str) -> None:
    with pytest.raises(ValueError, match=says) as info:
        normalize_version(asked)
    assert asked in str(info.value)
