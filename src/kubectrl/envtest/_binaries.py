"""Finding, or building, the control-plane binaries.

Plain mode needs etcd and kube-apiserver; cluster mode (:class:`kubectrl.envtest.LocalCluster`)
also needs kube-controller-manager, kube-scheduler and kwok, and ``python -m kubectrl.envtest
kubectl`` needs kubectl. Each binary is looked up in this order, and the first hit wins:

1. ``TEST_ASSET_<NAME>`` (``TEST_ASSET_KUBE_APISERVER``, ``TEST_ASSET_ETCD``,
   ``TEST_ASSET_KUBE_CONTROLLER_MANAGER``, ``TEST_ASSET_KUBE_SCHEDULER``, ``TEST_ASSET_KUBECTL``,
   ``TEST_ASSET_KWOK``): an explicit file (as controller-runtime's envtest reads them);
2. ``KUBEBUILDER_ASSETS``: a directory holding the binaries (what ``setup-envtest use -p path``
   prints; it has etcd, kube-apiserver and kubectl, so the other ones are looked up further on);
3. ``PATH`` (not for kubectl: nearly every machine has one on PATH, of any version, often outside
   kubectl's one-minor-version skew with the pinned apiserver);
4. kubectrl's cache, ``$KUBECTRL_CACHE_DIR`` or ``$XDG_CACHE_HOME/kubectrl`` or
   ``~/.cache/kubectrl``, under ``bin/<name>-<version>-<digest>/`` (built) or
   ``bin/envtest-<version>-<os>-<arch>/`` and ``bin/kube-<version>-<os>-<arch>/`` (downloaded);
5. setup-envtest's store, ``~/.local/share/kubebuilder-envtest/k8s/<version>-<os>-<arch>/``;
6. a download, as ``setup-envtest use`` does (:mod:`kubectrl.envtest._download`): etcd,
   kube-apiserver and kubectl from controller-tools' envtest archive, kube-controller-manager and
   kube-scheduler from the Kubernetes release; where that fails (no network, no archive for the
   version or platform) one line says why and the binary is built instead;
7. a ``go build`` of the upstream Go modules pinned in ``_gomod/`` (shipped in this package), whose
   result goes to the cache, so the second run is instant. kube-apiserver, kube-controller-manager,
   kube-scheduler and kubectl come from one module (``_gomod/kubernetes-<minor>``, one per
   supported Kubernetes minor) and the missing ones are built by one ``go build``, which compiles
   their shared packages once.

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
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path

from kubectrl.envtest._cache import cache_dir
from kubectrl.envtest._download import (
    ENVTEST_ARCHIVE_BINARIES,
    DownloadUnavailableError,
    download_enabled,
    download_envtest,
    download_kwok,
    download_release_binary,
    envtest_dir,
    kwok_dir,
    release_dir,
    setup_envtest_dir,
)
from kubectrl.envtest._errors import BinaryNotFoundError

__all__ = [
    "CLUSTER_SPECS",
    "Binaries",
    "BinarySpec",
    "cache_dir",
    "find_binaries",
    "find_binary",
]

Log = Callable[[str], None]


@dataclasses.dataclass(frozen=True)
class BinarySpec:
    """How to find and build one control-plane binary."""

    name: str
    env_var: str
    gomod_dir: str
    module: str
    package: str
    #: Whether ``PATH`` is searched (not for kubectl; see the module docstring).
    path_lookup: bool = True
    #: Whether a ``KUBEBUILDER_ASSETS`` directory must have it (setup-envtest ships only some).
    in_kubebuilder_assets: bool = True

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
        if self.module == "k8s.io/kubernetes":
            # Without these the binaries report v0.0.0-master (/version, `kubectl version`).
            version = self.version()
            major, minor = version.lstrip("v").split(".")[:2]
            for pkg in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
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
    gomod_dir="kubernetes-1.36",
    module="k8s.io/kubernetes",
    package="k8s.io/kubernetes/cmd/kube-apiserver",
)
KUBE_CONTROLLER_MANAGER = BinarySpec(
    name="kube-controller-manager",
    env_var="TEST_ASSET_KUBE_CONTROLLER_MANAGER",
    gomod_dir="kubernetes-1.36",
    module="k8s.io/kubernetes",
    package="k8s.io/kubernetes/cmd/kube-controller-manager",
    in_kubebuilder_assets=False,
)
KUBE_SCHEDULER = BinarySpec(
    name="kube-scheduler",
    env_var="TEST_ASSET_KUBE_SCHEDULER",
    gomod_dir="kubernetes-1.36",
    module="k8s.io/kubernetes",
    package="k8s.io/kubernetes/cmd/kube-scheduler",
    in_kubebuilder_assets=False,
)
KUBECTL = BinarySpec(
    name="kubectl",
    env_var="TEST_ASSET_KUBECTL",
    gomod_dir="kubernetes-1.36",
    module="k8s.io/kubernetes",
    package="k8s.io/kubernetes/cmd/kubectl",
    path_lookup=False,
    in_kubebuilder_assets=False,
)
KWOK = BinarySpec(
    name="kwok",
    env_var="TEST_ASSET_KWOK",
    gomod_dir="kwok",
    module="sigs.k8s.io/kwok",
    package="sigs.k8s.io/kwok/cmd/kwok",
    in_kubebuilder_assets=False,
)
ETCD = BinarySpec(
    name="etcd",
    env_var="TEST_ASSET_ETCD",
    gomod_dir="etcd",
    module="go.etcd.io/etcd/server/v3",
    package="go.etcd.io/etcd/server/v3",
)


#: Every binary, in the order ``binaries`` shows them; the last four are cluster mode's extras.
ALL_SPECS = (ETCD, KUBE_APISERVER, KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER, KUBECTL, KWOK)
#: What :class:`kubectrl.envtest.LocalCluster` runs (kubectl is for people and tests).
CLUSTER_SPECS = (ETCD, KUBE_APISERVER, KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER, KWOK)

#: The Kubernetes minors kubectrl.envtest can run, each pinned in ``_gomod/kubernetes-<minor>``.
SUPPORTED_VERSIONS = ("1.35", "1.36", "1.37")
#: The version used when none is asked for.
DEFAULT_VERSION = "1.37"


#: The environment variable naming the Kubernetes version when none is passed (as a Makefile's
#: ``ENVTEST_K8S_VERSION`` for setup-envtest); ``nox -s contract-1.35`` sets it.
VERSION_ENV = "KUBECTRL_ENVTEST_K8S_VERSION"
#: Feature gates that exist only from a Kubernetes minor on (an older apiserver refuses them).
GATES_SINCE = {"ShardedListAndWatch": "1.36"}


def requested_version() -> str | None:
    """The version asked for through :data:`VERSION_ENV`, normalized, or ``None``."""
    value = os.environ.get(VERSION_ENV)
    return normalize_version(value) if value else None


def minor_key(version: str) -> tuple[int, int]:
    """``"v1.37.2"`` or ``"1.37"`` -> ``(1, 37)``, for comparing releases."""
    major, minor = version.lstrip("v").split(".")[:2]
    return int(major), int(minor)


def gates_for(version: str, gates: Mapping[str, bool]) -> dict[str, bool]:
    """``gates`` checked against Kubernetes ``version``: a gate that minor lacks is an error."""
    for name, value in gates.items():
        since = GATES_SINCE.get(name)
        if since is not None and value and minor_key(version) < minor_key(since):
            raise ValueError(
                f"feature gate {name} needs Kubernetes >= {since}; this control plane runs "
                f"{version}"
            )
    return dict(gates)


def normalize_version(version: str | None) -> str:
    """``"1.37"``, ``"1.37.x"``, ``"v1.37.2"`` or ``None`` -> ``"1.37"``.

    ``None`` means ``$KUBECTRL_ENVTEST_K8S_VERSION`` if set, else :data:`DEFAULT_VERSION`.

    A patch number, when given, must be the pinned one: kubectrl ships one patch per minor.
    """
    if version is None:
        version = os.environ.get(VERSION_ENV) or DEFAULT_VERSION
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.(x|\*|\d+))?", version.strip())
    if not match:
        raise ValueError(
            f"kubectrl.envtest: Kubernetes version {version!r} is not of the form 1.37, 1.37.x "
            f"or 1.37.2"
        )
    minor = f"{match.group(1)}.{match.group(2)}"
    if minor not in SUPPORTED_VERSIONS:
        raise ValueError(
            f"kubectrl.envtest: Kubernetes {version} is not supported; choose one of "
            f"{', '.join(SUPPORTED_VERSIONS)}"
        )
    patch = match.group(3)
    if patch is not None and patch.isdigit():
        pinned = specs_for(minor)[1].version()
        if pinned != f"v{minor}.{patch}":
            raise ValueError(
                f"kubectrl.envtest: Kubernetes {version} is not the pinned patch of {minor} "
                f"({pinned}); ask for {minor} or {pinned}"
            )
    return minor


def specs_for(version: str | None = None) -> tuple[BinarySpec, ...]:
    """:data:`ALL_SPECS` for Kubernetes ``version`` (etcd and kwok are the same for every one)."""
    minor = normalize_version(version)
    return tuple(
        dataclasses.replace(spec, gomod_dir=f"kubernetes-{minor}")
        if spec.module == "k8s.io/kubernetes"
        else spec
        for spec in ALL_SPECS
    )


@dataclasses.dataclass(frozen=True)
class Binaries:
    """Resolved paths of the control-plane binaries and where each came from.

    etcd and kube-apiserver are always there. The others are ``None`` when they were not asked
    for (or, with ``find_binaries(cluster=False)``, when none was found without building);
    ``sources`` says where each found binary came from (``"cache"``, ``"PATH"``, ``"built"``...).
    """

    etcd: Path
    kube_apiserver: Path
    etcd_source: str
    kube_apiserver_source: str
    kube_controller_manager: Path | None = None
    kube_scheduler: Path | None = None
    kubectl: Path | None = None
    kwok: Path | None = None
    sources: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def get(self, name: str) -> Path | None:
        """The path of binary ``name`` (``"kube-scheduler"``...), or ``None`` if not found."""
        value: Path | None = getattr(self, name.replace("-", "_"), None)
        return value


def cached_path(spec: BinarySpec) -> Path:
    return cache_dir() / "bin" / f"{spec.name}-{spec.version()}-{spec.digest()}" / spec.name


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_binary(
    spec: BinarySpec,
    *,
    build: bool = True,
    log: Log | None = None,
    kube_version: str | None = None,
) -> tuple[Path, str]:
    """Resolve one binary; returns its path and a word for where it came from.

    ``kube_version`` (``"1.37"``, default :data:`DEFAULT_VERSION`) names the Kubernetes release
    whose downloaded binaries (and setup-envtest store entry) may serve ``spec``.
    """
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
        if spec.in_kubebuilder_assets:
            raise BinaryNotFoundError(
                f"KUBEBUILDER_ASSETS={assets} has no executable {spec.name}; unset it or point it "
                f"at a directory with etcd and kube-apiserver (e.g. from setup-envtest)"
            )
        tried.append(f"$KUBEBUILDER_ASSETS: no {spec.name} in {assets}")
    else:
        tried.append("$KUBEBUILDER_ASSETS: not set")

    if spec.path_lookup:
        if on_path := shutil.which(spec.name):
            return Path(on_path), "PATH"
        tried.append("PATH: not found")
    else:
        tried.append("PATH: not searched for " + spec.name)

    cached = cached_path(spec)
    if _is_executable(cached):
        return cached, "cache"
    tried.append(f"cache: no {cached}")

    release = specs_for(kube_version)[1].version()
    for directory, source in _prebuilt_dirs(spec, release):
        if _is_executable(directory / spec.name):
            return directory / spec.name, source
        tried.append(f"{source}: no {directory / spec.name}")

    go = shutil.which("go")
    if build and go:
        built = _build_group([spec], Path(go), log=log or _stderr)
        return built[spec.name], "built"
    tried.append("go build: " + ("disabled" if not build else "no `go` on PATH"))

    raise BinaryNotFoundError(
        f"cannot find {spec.name} {spec.version()}; tried:\n  - "
        + "\n  - ".join(tried)
        + "\nInstall Go >= 1.26 (kubectrl then builds it from the pinned upstream module), or "
        f"set {spec.env_var} / KUBEBUILDER_ASSETS (for example from "
        "`setup-envtest use -p path`), or put it on PATH."
    )


def find_binaries(
    *,
    build: bool = True,
    log: Log | None = None,
    cluster: bool = False,
    kubectl: bool = False,
    version: str | None = None,
) -> Binaries:
    """Resolve the control-plane binaries, downloading or building the missing ones if allowed.

    ``version`` is the Kubernetes release (``"1.37"``, ``"1.37.x"`` or ``"v1.37.2"``, as
    ``setup-envtest use`` takes it; default :data:`DEFAULT_VERSION`; one of
    :data:`SUPPORTED_VERSIONS`). etcd and kube-apiserver are required. With ``cluster=True``
    kube-controller-manager, kube-scheduler and kwok are required too (and ``kubectl=True``
    requires kubectl); otherwise they are looked up without downloading or building and a missing
    one is ``None``, not an error. A missing binary is downloaded (unless
    ``KUBECTRL_ENVTEST_DOWNLOAD=0``), else built: binaries of one pinned Go module together, by
    one ``go build``. ``build=False`` neither downloads nor builds.

    Example::

        binaries = find_binaries(build=False)
        print(binaries.kube_apiserver, binaries.kube_apiserver_source)
    """
    minor = normalize_version(version)
    specs = specs_for(minor)
    wanted = {ETCD.name, KUBE_APISERVER.name}
    if cluster:
        wanted |= {spec.name for spec in CLUSTER_SPECS}
    if kubectl:
        wanted.add(KUBECTL.name)
    found: dict[str, tuple[Path, str]] = {}
    missing: list[BinarySpec] = []
    go = shutil.which("go")
    for spec in specs:
        try:
            found[spec.name] = find_binary(spec, build=False, log=log, kube_version=minor)
        except BinaryNotFoundError:
            if spec.name not in wanted:
                continue
            if not build or _explicitly_set(spec):
                find_binary(spec, build=build, log=log, kube_version=minor)  # raises
                raise
            missing.append(spec)
    if missing and download_enabled():
        missing = _download_missing(missing, specs[1].version(), found, log=log or _stderr)
    if missing and go is None:
        find_binary(missing[0], build=True, log=log, kube_version=minor)  # raises, saying why
    by_module: dict[str, list[BinarySpec]] = {}
    for spec in missing:
        by_module.setdefault(spec.gomod_dir, []).append(spec)
    if go is not None:  # (without go nothing is missing: each missing binary raised above)
        for group in by_module.values():
            for name, path in _build_group(group, Path(go), log=log or _stderr).items():
                found[name] = (path, "built")

    def optional(name: str) -> Path | None:
        return found[name][0] if name in found else None

    return Binaries(
        etcd=found[ETCD.name][0],
        kube_apiserver=found[KUBE_APISERVER.name][0],
        etcd_source=found[ETCD.name][1],
        kube_apiserver_source=found[KUBE_APISERVER.name][1],
        kube_controller_manager=optional(KUBE_CONTROLLER_MANAGER.name),
        kube_scheduler=optional(KUBE_SCHEDULER.name),
        kubectl=optional(KUBECTL.name),
        kwok=optional(KWOK.name),
        sources={name: source for name, (_, source) in found.items()},
    )


def _prebuilt_dirs(spec: BinarySpec, release: str) -> list[tuple[Path, str]]:
    """Where a downloaded ``spec`` of Kubernetes ``release`` (``"v1.37.2"``) may already be."""
    if spec.name in ENVTEST_ARCHIVE_BINARIES:
        return [
            (envtest_dir(release), "download"),
            (setup_envtest_dir(release), "setup-envtest"),
        ]
    if spec.name in _RELEASE_BINARIES:
        return [(release_dir(release), "download")]
    if spec.name == KWOK.name:
        return [(kwok_dir(spec.version()), "download")]
    return []


#: Binaries downloaded one by one from the Kubernetes release bucket.
_RELEASE_BINARIES = ("kube-controller-manager", "kube-scheduler")


def _download_missing(
    missing: Sequence[BinarySpec],
    release: str,
    found: dict[str, tuple[Path, str]],
    *,
    log: Log,
) -> list[BinarySpec]:
    """Download what can be downloaded into ``found``; return what is still missing.

    A download that is not possible (no network, no archive for this version or platform) is
    said in one line and left to the build; a wrong digest is an error.
    """
    failed: dict[str, tuple[list[str], str]] = {}  # reason -> (names with versions, reason)

    def attempt(specs: Sequence[BinarySpec], version: str, get: Callable[[], None]) -> None:
        if not specs:
            return
        try:
            get()
        except DownloadUnavailableError as exc:
            names = ", ".join(spec.name for spec in specs if spec.name not in found)
            failed.setdefault(str(exc), ([], str(exc)))[0].append(f"{names} {version}")

    archive = [spec for spec in missing if spec.name in ENVTEST_ARCHIVE_BINARIES]
    bucket = [spec for spec in missing if spec.name in _RELEASE_BINARIES]
    kwok = [spec for spec in missing if spec.name == KWOK.name]

    def from_archive() -> None:
        directory = download_envtest(release, log=log)
        for spec in archive:
            found[spec.name] = (directory / spec.name, "download")

    def from_bucket() -> None:
        for spec in bucket:
            found[spec.name] = (download_release_binary(spec.name, release, log=log), "download")

    def from_kwok_release() -> None:
        found[KWOK.name] = (download_kwok(KWOK.version(), log=log), "download")

    attempt(archive, release, from_archive)
    attempt(bucket, release, from_bucket)
    attempt(kwok, KWOK.version(), from_kwok_release)
    if failed:
        # One line for all of them: no network fails every download the same way.
        what = "; ".join(f"{' and '.join(names)} ({reason})" for names, reason in failed.values())
        log(f"kubectrl.envtest: cannot download {what}; building instead")
    return [spec for spec in missing if spec.name not in found]  # in the order asked


def _explicitly_set(spec: BinarySpec) -> bool:
    """An env var naming a binary that is not there is the user's error, never built around."""
    if os.environ.get(spec.env_var):
        return True
    return bool(os.environ.get("KUBEBUILDER_ASSETS")) and spec.in_kubebuilder_assets


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)  # noqa: T201 - progress for a long build


@contextlib.contextmanager
def _build_lock(lock_path: Path) -> Iterator[None]:
    """Serialize builds of one module across processes (pytest-xdist, two terminals)."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


#: Seconds between "still building" lines during a long build.
PROGRESS_EVERY = 30.0


def _run_with_progress(
    cmd: Sequence[str], *, cwd: Path, env: Mapping[str, str], what: str, log: Log
) -> subprocess.CompletedProcess[str]:
    """Run ``cmd``; every ``PROGRESS_EVERY`` seconds log that ``what`` is still building."""
    started = time.monotonic()
    done = threading.Event()

    def progress() -> None:
        while not done.wait(PROGRESS_EVERY):
            log(f"kubectrl.envtest: still building {what} ({time.monotonic() - started:.0f}s)")

    ticker = threading.Thread(target=progress, name="kubectrl-build-progress", daemon=True)
    ticker.start()
    try:
        return subprocess.run(
            list(cmd), cwd=cwd, env=dict(env), capture_output=True, text=True, check=False
        )
    finally:
        done.set()
        ticker.join()


def _build_group(specs: Sequence[BinarySpec], go: Path, *, log: Log) -> dict[str, Path]:
    """Build the binaries of one pinned module with one ``go build``; cache and return them."""
    first = specs[0]
    others = sorted({spec.gomod_dir for spec in specs} - {first.gomod_dir})
    if others:
        raise ValueError(
            f"_build_group: {first.name} is built from {first.gomod_dir}, but the same go build "
            f"was given binaries of {', '.join(others)}"
        )
    lock = cache_dir() / "bin" / f".{first.gomod_dir}-{first.digest()}.lock"
    with _build_lock(lock):
        # Another process may have built some of them while we waited.
        todo = [spec for spec in specs if not _is_executable(cached_path(spec))]
        result = {spec.name: cached_path(spec) for spec in specs}
        if not todo:
            return result
        names = ", ".join(spec.name for spec in todo)
        estimate = BUILD_ESTIMATES.get(first.gomod_dir.split("-")[0], "a few minutes")
        started = time.monotonic()
        log(
            f"kubectrl.envtest: building {names} {first.version()} from {first.module} with {go} "
            f"(first run only, {estimate} on 2 cores with an empty Go cache; cached in "
            f"{cache_dir() / 'bin'})"
        )
        with tempfile.TemporaryDirectory(prefix=f"kubectrl-build-{first.gomod_dir}-") as tmp:
            workdir = Path(tmp)
            for name, data in first.gomod_files().items():
                (workdir / name).write_bytes(data)
            out_dir = workdir / "out"
            out_dir.mkdir()
            env = dict(os.environ)
            # The shipped go.mod/go.sum are the pins: never let the build rewrite them.
            env["GOFLAGS"] = "-mod=readonly -buildvcs=false"
            cmd = [
                str(go),
                "build",
                "-trimpath",
                f"-ldflags={first.ldflags()}",
                "-o",
                f"{out_dir}{os.sep}",
                *(spec.package for spec in todo),
            ]
            proc = _run_with_progress(cmd, cwd=workdir, env=env, what=names, log=log)
            if proc.returncode != 0:
                tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-40:])
                env_vars = " / ".join(spec.env_var for spec in todo)
                raise BinaryNotFoundError(
                    f"`{' '.join(cmd)}` failed (exit {proc.returncode}) in a copy of "
                    f"kubectrl/envtest/_gomod/{first.gomod_dir}:\n{tail}\n"
                    f"Set {env_vars} (or KUBEBUILDER_ASSETS) to use prebuilt binaries."
                )
            for spec in todo:
                target = cached_path(spec)
                target.parent.mkdir(parents=True, exist_ok=True)
                staged = target.with_name(f".{spec.name}.tmp")
                shutil.copy2(out_dir / _go_output_name(spec.package), staged)
                staged.chmod(0o755)
                staged.replace(target)
        log(f"kubectrl.envtest: built {names} in {time.monotonic() - started:.0f}s")
        return result


def _go_output_name(package: str) -> str:
    """The file ``go build -o DIR/`` writes for ``package``: its last path element, or the one
    before a major-version suffix (``go.etcd.io/etcd/server/v3`` -> ``server``)."""
    parts = package.rstrip("/").split("/")
    if len(parts) > 1 and re.fullmatch(r"v\d+", parts[-1]):
        return parts[-2]
    return parts[-1]


#: Cold build times measured on a 2-core machine with an empty Go build cache (modules already
#: downloaded), shown before a build starts; docs/envtest.md has the measurements.
BUILD_ESTIMATES = {
    "etcd": "about 1 minute (6 on a busy machine)",
    "kubernetes": "about 9 minutes (24 on a busy machine)",
    "kwok": "2 to 4 minutes",
}
