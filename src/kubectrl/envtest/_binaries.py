"""Finding, or building, etcd and kube-apiserver.

Each binary is looked up in this order, and the first hit wins:

1. ``TEST_ASSET_KUBE_APISERVER`` / ``TEST_ASSET_ETCD``: an explicit file (as controller-runtime's
   envtest reads them);
2. ``KUBEBUILDER_ASSETS``: a directory holding ``kube-apiserver`` and ``etcd`` (what
   ``setup-envtest use -p path`` prints);
3. ``PATH``;
4. kubectrl's cache, ``$KUBECTRL_CACHE_DIR`` or ``$XDG_CACHE_HOME/kubectrl`` or
   ``~/.cache/kubectrl``, under ``bin/<name>-<version>-<digest>/``;
5. a ``go build`` of the upstream Go modules pinned in ``_gomod/`` (shipped in this package), whose
   result goes to the cache, so the second run is instant.

An environment variable that is set but points at nothing is an error, never a silent fall-through:
the user asked for that binary.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path

from kubectrl.envtest._errors import BinaryNotFoundError

__all__ = ["Binaries", "BinarySpec", "cache_dir", "find_binaries", "find_binary"]

Log = Callable[[str], None]


@dataclasses.dataclass(frozen=True)
class BinarySpec:
    """How to find and build one control-plane binary."""

    name: str
    env_var: str
    gomod_dir: str
    module: str
    package: str

    def gomod_files(self) -> dict[str, bytes]:
        """The pinned ``go.mod`` and ``go.sum`` shipped with kubectrl."""
        base = resources.files("kubectrl.envtest").joinpath("_gomod").joinpath(self.gomod_dir)
        return {name: base.joinpath(name).read_bytes() for name in ("go.mod", "go.sum")}

    def version(self) -> str:
        """The pinned upstream version, read from the shipped ``go.mod``."""
        gomod = self.gomod_files()["go.mod"].decode()
        match = re.search(rf"^\s*(?:require\s+)?{re.escape(self.module)}\s+(v\S+)", gomod, re.M)
        if not match:
            raise RuntimeError(
                f"kubectrl.envtest: {self.gomod_dir}/go.mod does not pin {self.module}"
            )
        return match.group(1)

    def digest(self) -> str:
        """A short digest of the pinned module graph; a change of pins means a new cache entry."""
        h = hashlib.sha256()
        for name, data in sorted(self.gomod_files().items()):
            h.update(name.encode() + b"\0" + data + b"\0")
        return h.hexdigest()[:12]

    def ldflags(self) -> str:
        flags = ["-s", "-w"]
        if self.name == "kube-apiserver":
            # Without these the server reports v0.0.0-master in /version.
            version = self.version()
            major, minor = version.lstrip("v").split(".")[:2]
            pkg = "k8s.io/component-base/version"
            flags += [
                f"-X {pkg}.gitVersion={version}",
                f"-X {pkg}.gitMajor={major}",
                f"-X {pkg}.gitMinor={minor}",
                f"-X {pkg}.gitTreeState=clean",
            ]
        return " ".join(flags)


KUBE_APISERVER = BinarySpec(
    name="kube-apiserver",
    env_var="TEST_ASSET_KUBE_APISERVER",
    gomod_dir="kube-apiserver",
    module="k8s.io/kubernetes",
    package="k8s.io/kubernetes/cmd/kube-apiserver",
)
ETCD = BinarySpec(
    name="etcd",
    env_var="TEST_ASSET_ETCD",
    gomod_dir="etcd",
    module="go.etcd.io/etcd/server/v3",
    package="go.etcd.io/etcd/server/v3",
)


@dataclasses.dataclass(frozen=True)
class Binaries:
    """Resolved paths of the control-plane binaries and where each came from."""

    etcd: Path
    kube_apiserver: Path
    etcd_source: str
    kube_apiserver_source: str


def cache_dir() -> Path:
    """kubectrl's cache directory (binaries are kept under ``bin/``)."""
    if explicit := os.environ.get("KUBECTRL_CACHE_DIR"):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kubectrl"


def cached_path(spec: BinarySpec) -> Path:
    return cache_dir() / "bin" / f"{spec.name}-{spec.version()}-{spec.digest()}" / spec.name


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_binary(
    spec: BinarySpec, *, build: bool = True, log: Log | None = None
) -> tuple[Path, str]:
    """Resolve one binary; returns its path and a word for where it came from."""
    tried: list[str] = []

    if explicit := os.environ.get(spec.env_var):
        path = Path(explicit)
        if _is_executable(path):
            return path, f"${spec.env_var}"
        raise BinaryNotFoundError(
            f"{spec.env_var}={explicit} is not an executable file; unset it or point it at a "
            f"{spec.name} binary"
        )
    tried.append(f"${spec.env_var}: not set")

    if assets := os.environ.get("KUBEBUILDER_ASSETS"):
        path = Path(assets) / spec.name
        if _is_executable(path):
            return path, "$KUBEBUILDER_ASSETS"
        raise BinaryNotFoundError(
            f"KUBEBUILDER_ASSETS={assets} has no executable {spec.name}; unset it or point it at "
            f"a directory with etcd and kube-apiserver (e.g. from setup-envtest)"
        )
    tried.append("$KUBEBUILDER_ASSETS: not set")

    if on_path := shutil.which(spec.name):
        return Path(on_path), "PATH"
    tried.append("PATH: not found")

    cached = cached_path(spec)
    if _is_executable(cached):
        return cached, "cache"
    tried.append(f"cache: no {cached}")

    go = shutil.which("go")
    if build and go:
        return _build(spec, Path(go), cached, log=log or _stderr), "built"
    tried.append("go build: " + ("disabled" if not build else "no `go` on PATH"))

    raise BinaryNotFoundError(
        f"cannot find {spec.name} {spec.version()}; tried:\n  - "
        + "\n  - ".join(tried)
        + "\nInstall Go >= 1.26 (kubectrl then builds it from the pinned upstream module), or "
        f"set {spec.env_var} / KUBEBUILDER_ASSETS (for example from "
        "`setup-envtest use -p path`), or put it on PATH."
    )


def find_binaries(*, build: bool = True, log: Log | None = None) -> Binaries:
    """Resolve etcd and kube-apiserver (building them if needed and allowed)."""
    etcd, etcd_source = find_binary(ETCD, build=build, log=log)
    apiserver, apiserver_source = find_binary(KUBE_APISERVER, build=build, log=log)
    return Binaries(
        etcd=etcd,
        kube_apiserver=apiserver,
        etcd_source=etcd_source,
        kube_apiserver_source=apiserver_source,
    )


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)  # noqa: T201 - progress for a long build


@contextlib.contextmanager
def _build_lock(target: Path) -> Iterator[None]:
    """Serialize builds of one binary across processes (pytest-xdist, two terminals)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _build(spec: BinarySpec, go: Path, target: Path, *, log: Log) -> Path:
    with _build_lock(target):
        if _is_executable(target):  # another process built it while we waited
            return target
        started = time.monotonic()
        log(
            f"kubectrl.envtest: building {spec.name} {spec.version()} from {spec.module} "
            f"with {go} (first run only; cached in {target.parent})"
        )
        with tempfile.TemporaryDirectory(prefix=f"kubectrl-build-{spec.name}-") as tmp:
            workdir = Path(tmp)
            for name, data in spec.gomod_files().items():
                (workdir / name).write_bytes(data)
            env = dict(os.environ)
            # The shipped go.mod/go.sum are the pins: never let the build rewrite them.
            env["GOFLAGS"] = "-mod=readonly -buildvcs=false"
            output = workdir / spec.name
            cmd = [
                str(go),
                "build",
                "-trimpath",
                f"-ldflags={spec.ldflags()}",
                "-o",
                str(output),
                spec.package,
            ]
            proc = subprocess.run(
                cmd, cwd=workdir, env=env, capture_output=True, text=True, check=False
            )
            if proc.returncode != 0:
                tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-40:])
                raise BinaryNotFoundError(
                    f"`{' '.join(cmd)}` failed (exit {proc.returncode}) in a copy of "
                    f"kubectrl/envtest/_gomod/{spec.gomod_dir}:\n{tail}\n"
                    f"Set {spec.env_var} or KUBEBUILDER_ASSETS to use a prebuilt {spec.name}."
                )
            staged = target.with_name(f".{spec.name}.tmp")
            shutil.copy2(output, staged)
            staged.chmod(0o755)
            staged.replace(target)
        log(f"kubectrl.envtest: built {target} in {time.monotonic() - started:.0f}s")
        return target
