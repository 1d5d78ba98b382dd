"""Downloading prebuilt control-plane binaries, as ``setup-envtest use`` does.

controller-tools publishes an index, ``envtest-releases.yaml``, mapping each Kubernetes version to
one archive per platform (``envtest-v1.37.2-linux-amd64.tar.gz``: etcd, kube-apiserver, kubectl)
with its sha512 (controller-runtime ``tools/setup-envtest/remote/http_client.go``). kubectrl
reads that index, downloads the archive for this platform, verifies the digest and unpacks it
into its cache, ``bin/envtest-<version>-<os>-<arch>/``. kube-controller-manager and
kube-scheduler come from the Kubernetes release bucket (``<release URL>/<version>/bin/<os>/<arch>/
<name>``, each with a ``.sha512`` beside it), into ``bin/kube-<version>-<os>-<arch>/``. kwok comes
from its GitHub release (``kwok-<os>-<arch>``, uploaded bare by kwok's ``hack/releases.sh``, which
publishes no checksum file): the release's API answer names each asset's ``sha256`` digest, which
GitHub computes on upload, and an asset without one is not downloaded. It goes into
``bin/kwok-<version>-<os>-<arch>/``.

setup-envtest's own store is reused when it has the version:
``$XDG_DATA_HOME/kubebuilder-envtest/k8s/<version>-<os>-<arch>/`` (``~/.local/share/...``;
``~/Library/Application Support/io.kubebuilder.envtest/...`` on macOS), as written by
controller-runtime ``tools/setup-envtest/store/store.go``.

Settings (environment variables), for a mirror behind a firewall:

- ``KUBECTRL_ENVTEST_INDEX_URL``: the index (default: controller-tools' on GitHub);
- ``KUBECTRL_ENVTEST_RELEASE_URL``: the Kubernetes release bucket (default ``https://dl.k8s.io/release``);
- ``KUBECTRL_ENVTEST_KWOK_URL``: where kwok's releases are described, ``<URL>/<tag>`` answering as
  GitHub's "get a release by tag name" does (default kwok's on ``api.github.com``);
- ``KUBECTRL_ENVTEST_DOWNLOAD=0``: never download (build from the pinned Go modules instead);
- ``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``NO_PROXY`` are honoured.

A download is written to ``<file>.part`` under a lock (two processes downloading at once produce one
copy), resumed with a ``Range`` request when the connection drops, and removed when its digest is
wrong. What a server sends is bounded: an index or release description over
:data:`MAX_INDEX_BYTES`, or a download over :data:`MAX_DOWNLOAD_BYTES`, is refused (and the partial
file removed), so a broken or hostile mirror cannot fill the memory or the disk.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import platform
import shutil
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kubectrl.envtest._cache import cache_dir
from kubectrl.envtest._errors import BinaryNotFoundError

__all__ = [
    "DEFAULT_INDEX_URL",
    "DEFAULT_RELEASE_URL",
    "DigestMismatchError",
    "DownloadUnavailableError",
    "OversizedDownloadError",
    "download_enabled",
    "download_envtest",
    "download_kwok",
    "download_release_binary",
    "envtest_dir",
    "host_platform",
    "kwok_dir",
    "release_dir",
    "setup_envtest_dir",
]

Log = Callable[[str], None]

DEFAULT_INDEX_URL = (
    "https://raw.githubusercontent.com/kubernetes-sigs/controller-tools/HEAD/envtest-releases.yaml"
)
DEFAULT_RELEASE_URL = "https://dl.k8s.io/release"
DEFAULT_KWOK_URL = "https://api.github.com/repos/kubernetes-sigs/kwok/releases/tags"
#: The largest index or release description read (controller-tools' index is about 60 KB, a
#: GitHub release's description about 40 KB).
MAX_INDEX_BYTES = 8 << 20
#: The largest download accepted (an envtest archive is about 65 MB, kube-controller-manager
#: about 120 MB).
MAX_DOWNLOAD_BYTES = 1 << 30
#: Seconds to wait for a connection or a read before giving up on a download.
TIMEOUT = 15.0
#: Seconds between two progress lines while downloading.
PROGRESS_EVERY = 2.0
#: How many times a dropped download is resumed before giving up.
RESUMES = 3
_CHUNK = 1 << 16

#: The binaries an envtest archive has.
ENVTEST_ARCHIVE_BINARIES = ("etcd", "kube-apiserver", "kubectl")


class DownloadUnavailableError(BinaryNotFoundError):
    """No download: no network, no index entry for this version and platform, a server error."""


class DigestMismatchError(BinaryNotFoundError):
    """A downloaded file's digest is not the published one; the file was removed."""


class OversizedDownloadError(BinaryNotFoundError):
    """A server sent more than :data:`MAX_DOWNLOAD_BYTES`; the partial file was removed."""


def download_enabled() -> bool:
    """Whether downloads are allowed (``KUBECTRL_ENVTEST_DOWNLOAD`` is not ``0``/``false``)."""
    value = os.environ.get("KUBECTRL_ENVTEST_DOWNLOAD", "1").strip().lower()
    if value in {"0", "false", "no", "off"}:
        return False
    if value in {"", "1", "true", "yes", "on"}:
        return True
    raise ValueError(
        f"KUBECTRL_ENVTEST_DOWNLOAD={value!r}: expected 1/true/yes/on or 0/false/no/off"
    )


def host_platform() -> tuple[str, str]:
    """This machine's ``(os, arch)`` in Go's words (``("linux", "amd64")``)."""
    system = sys.platform
    goos = "darwin" if system == "darwin" else "windows" if system == "win32" else system
    goos = "linux" if goos.startswith("linux") else goos
    machine = platform.machine().lower()
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(
        machine, machine
    )
    return goos, arch


def _bin_root() -> Path:
    return cache_dir() / "bin"


def envtest_dir(version: str) -> Path:
    """Where the unpacked envtest archive of ``version`` (``"v1.37.2"``) is cached."""
    goos, arch = host_platform()
    return _bin_root() / f"envtest-{version}-{goos}-{arch}"


def release_dir(version: str) -> Path:
    """Where kube-controller-manager and kube-scheduler of ``version`` are downloaded to."""
    goos, arch = host_platform()
    return _bin_root() / f"kube-{version}-{goos}-{arch}"


def kwok_dir(version: str) -> Path:
    """Where kwok of ``version`` (``"v0.8.0"``) is downloaded to."""
    goos, arch = host_platform()
    return _bin_root() / f"kwok-{version}-{goos}-{arch}"


def setup_envtest_dir(version: str) -> Path:
    """setup-envtest's store entry for ``version`` (it may not exist)."""
    goos, arch = host_platform()
    if explicit := os.environ.get("KUBECTRL_SETUP_ENVTEST_STORE"):
        root = Path(explicit)
    elif sys.platform == "darwin":
        root = Path.home() / "Library" / "Application Support" / "io.kubebuilder.envtest"
    else:
        data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        root = Path(data) / "kubebuilder-envtest"
    return root / "k8s" / f"{version.lstrip('v')}-{goos}-{arch}"


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)  # noqa: T201 - download progress


@contextlib.contextmanager
def _lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _open(url: str, headers: dict[str, str] | None = None) -> Any:
    # A fresh opener reads the proxy variables now (urllib's ProxyHandler honours HTTPS_PROXY,
    # HTTP_PROXY and NO_PROXY).
    if urllib.parse.urlsplit(url).scheme not in {"http", "https"}:
        raise DownloadUnavailableError(f"{url}: only http:// and https:// URLs are fetched")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler())
    request = urllib.request.Request(  # noqa: S310 - the scheme is checked above
        url, headers={"User-Agent": "kubectrl-envtest", **(headers or {})}
    )
    try:
        return opener.open(request, timeout=TIMEOUT)
    except urllib.error.HTTPError as exc:
        raise DownloadUnavailableError(f"GET {url}: HTTP {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DownloadUnavailableError(f"GET {url}: {reason}") from exc


def _read_text(url: str, headers: dict[str, str] | None = None) -> str:
    with _open(url, headers) as response:
        data: bytes = response.read(MAX_INDEX_BYTES + 1)
    if len(data) > MAX_INDEX_BYTES:
        raise DownloadUnavailableError(
            f"GET {url}: the answer is over {MAX_INDEX_BYTES} bytes, too large for an index"
        )
    try:
        return data.decode()
    except UnicodeDecodeError as exc:
        raise DownloadUnavailableError(f"GET {url}: the answer is not UTF-8 text ({exc})") from exc


def find_archive(version: str, *, index_url: str | None = None) -> tuple[str, str, str]:
    """The ``(name, url, sha512)`` of the envtest archive of ``version`` for this platform."""
    import yaml  # only needed when downloading

    url = index_url or os.environ.get("KUBECTRL_ENVTEST_INDEX_URL") or DEFAULT_INDEX_URL
    text = _read_text(url)
    try:
        index = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise DownloadUnavailableError(f"the envtest index {url} is not YAML: {exc}") from exc
    releases = index.get("releases") if isinstance(index, dict) else None
    if not isinstance(releases, dict):
        raise DownloadUnavailableError(f"the envtest index {url} has no 'releases' map")
    goos, arch = host_platform()
    name = f"envtest-{version}-{goos}-{arch}.tar.gz"
    archives = releases.get(version) or {}
    entry = archives.get(name) if isinstance(archives, dict) else None
    if not isinstance(entry, dict):
        raise DownloadUnavailableError(f"the envtest index {url} has no {name}")
    link, digest = entry.get("selfLink"), entry.get("hash")
    if not isinstance(link, str) or not isinstance(digest, str) or len(digest) != 128:
        raise DownloadUnavailableError(
            f"the envtest index {url}: {name} needs a selfLink and a 128-hex-digit sha512 hash"
        )
    return name, urllib.parse.urljoin(url, link), digest.lower()


def _human(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.1f} {unit}" if unit != "B" else f"{size:.0f} B"
        size /= 1000
    return f"{size:.1f} GB"  # pragma: no cover - the loop returns


def fetch(
    url: str,
    dest: Path,
    *,
    sha512: str | None = None,
    sha256: str | None = None,
    log: Log | None = None,
) -> Path:
    """Download ``url`` to ``dest`` and check its digest; resumes a dropped connection.

    Exactly one of ``sha512`` and ``sha256`` is the published digest. The bytes go to ``dest`` +
    ``.part`` first; a mismatching digest removes it and raises :class:`DigestMismatchError`, and
    so does a download over :data:`MAX_DOWNLOAD_BYTES`. Example::

        fetch(url, Path("/tmp/envtest.tar.gz"), sha512=digest)
    """
    if sha512 is not None and sha256 is None:
        algorithm, published = "sha512", sha512
    elif sha256 is not None and sha512 is None:
        algorithm, published = "sha256", sha256
    else:
        raise TypeError("fetch() takes exactly one of sha512= and sha256=")
    log = log or _stderr
    part = dest.with_name(dest.name + ".part")
    dest.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    last_line = started
    fetched = 0
    total: int | None = None
    for attempt in range(RESUMES + 1):
        have = part.stat().st_size if part.exists() else 0
        headers = {"Range": f"bytes={have}-"} if have else {}
        try:
            with _open(url, headers) as response:
                status = response.status
                if have and status != 206:  # the server ignored the Range: start again
                    have = 0
                length = response.headers.get("Content-Length")
                total = have + int(length) if length is not None else None
                if total is not None and total > MAX_DOWNLOAD_BYTES:
                    part.unlink(missing_ok=True)
                    raise OversizedDownloadError(
                        f"{url}: {total} bytes announced, over the {MAX_DOWNLOAD_BYTES} accepted"
                    )
                with open(part, "ab" if have else "wb") as out:
                    while chunk := response.read(_CHUNK):
                        out.write(chunk)
                        fetched += len(chunk)
                        if out.tell() > MAX_DOWNLOAD_BYTES:
                            out.close()
                            part.unlink(missing_ok=True)
                            raise OversizedDownloadError(
                                f"{url}: more than the {MAX_DOWNLOAD_BYTES} bytes accepted; the "
                                "download was removed"
                            )
                        now = time.monotonic()
                        if now - last_line >= PROGRESS_EVERY:
                            last_line = now
                            log(_progress(dest.name, have + fetched, total, fetched, now - started))
            size = part.stat().st_size
            if total is not None and size < total:
                raise DownloadUnavailableError(f"GET {url}: connection closed at {size}/{total}")
            break
        except (DownloadUnavailableError, OSError, ValueError) as exc:
            if attempt == RESUMES or not part.exists() or part.stat().st_size == 0:
                raise DownloadUnavailableError(f"GET {url}: {exc}") from exc
            log(f"kubectrl.envtest: {dest.name}: {exc}; resuming at {part.stat().st_size} bytes")
    digest = hashlib.new(algorithm)
    with open(part, "rb") as stream:
        while block := stream.read(1 << 20):
            digest.update(block)
    if digest.hexdigest() != published.lower():
        part.unlink()
        raise DigestMismatchError(
            f"{url}: {algorithm} {digest.hexdigest()} is not the published {published}; the "
            "download was removed. A mirror out of step with its index, or a proxy rewriting "
            "downloads?"
        )
    part.replace(dest)
    elapsed = time.monotonic() - started
    log(_progress(dest.name, dest.stat().st_size, dest.stat().st_size, fetched, elapsed, done=True))
    return dest


def _progress(
    name: str, have: int, total: int | None, fetched: int, elapsed: float, *, done: bool = False
) -> str:
    rate = _human(fetched / elapsed) + "/s" if elapsed > 0 else "?"
    size = f"{_human(have)}/{_human(total)}" if total and not done else _human(have)
    verb = "downloaded" if done else "downloading"
    return f"kubectrl.envtest: {verb} {name}: {size} at {rate} ({elapsed:.0f}s)"


def download_envtest(version: str, *, log: Log | None = None) -> Path:
    """Download and unpack the envtest archive of ``version`` (``"v1.37.2"``); its directory.

    Another process downloading the same version at the same time waits for it and reuses its
    copy. Example::

        directory = download_envtest("v1.37.2")
        print(directory / "kube-apiserver")
    """
    target = envtest_dir(version)
    with _lock(target.with_name(f".{target.name}.lock")):
        if all((target / name).is_file() for name in ENVTEST_ARCHIVE_BINARIES):
            return target
        name, url, sha512 = find_archive(version)
        archive = fetch(url, target.with_name(name), sha512=sha512, log=log)
        try:
            _unpack(archive, target)
        finally:
            archive.unlink(missing_ok=True)
        return target


def _unpack(archive: Path, target: Path) -> None:
    """Unpack the regular files of ``archive`` by their base names into ``target`` (atomically)."""
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar.getmembers():
                if not member.isreg():
                    continue
                base = os.path.basename(member.name)
                if base in {"", ".", ".."}:
                    raise DownloadUnavailableError(f"{archive.name}: bad entry {member.name!r}")
                source = tar.extractfile(member)
                if source is None:  # pragma: no cover - isreg() members have contents
                    continue
                with source, open(staging / base, "wb") as out:
                    shutil.copyfileobj(source, out)
                (staging / base).chmod(0o755)
        missing = [n for n in ENVTEST_ARCHIVE_BINARIES if not (staging / n).is_file()]
        if missing:
            raise DownloadUnavailableError(f"{archive.name} has no {', '.join(missing)}")
        if target.exists():
            shutil.rmtree(target)
        staging.replace(target)
    except tarfile.TarError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise DownloadUnavailableError(f"{archive.name} is not a readable .tar.gz: {exc}") from exc
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def download_release_binary(name: str, version: str, *, log: Log | None = None) -> Path:
    """Download ``name`` (kube-controller-manager, kube-scheduler) of ``version`` from the
    Kubernetes release bucket, checked against the ``.sha512`` published beside it.

    Example::

        path = download_release_binary("kube-scheduler", "v1.37.2")
    """
    goos, arch = host_platform()
    base = os.environ.get("KUBECTRL_ENVTEST_RELEASE_URL") or DEFAULT_RELEASE_URL
    url = f"{base.rstrip('/')}/{version}/bin/{goos}/{arch}/{name}"
    target = release_dir(version) / name
    with _lock(target.with_name(f".{name}.lock")):
        if target.is_file():
            return target
        published = _read_text(url + ".sha512").split()
        if not published or len(published[0]) != 128:
            raise DownloadUnavailableError(f"{url}.sha512 is not a sha512 digest")
        fetch(url, target, sha512=published[0], log=log)
        target.chmod(0o755)
        return target


def find_kwok_asset(version: str) -> tuple[str, str, str]:
    """The ``(name, url, sha256)`` of kwok ``version``'s binary for this platform.

    Read from the release's description (GitHub's "get a release by tag name" answer: ``assets``,
    each with ``name``, ``browser_download_url`` and ``digest`` ``"sha256:<hex>"``). An asset
    without a digest is refused: nothing would vouch for the bytes.
    """
    base = os.environ.get("KUBECTRL_ENVTEST_KWOK_URL") or DEFAULT_KWOK_URL
    url = f"{base.rstrip('/')}/{urllib.parse.quote(version)}"
    text = _read_text(url, {"Accept": "application/vnd.github+json"})
    try:
        release = json.loads(text)
    except ValueError as exc:
        raise DownloadUnavailableError(f"kwok's release {url} is not JSON: {exc}") from exc
    assets = release.get("assets") if isinstance(release, dict) else None
    if not isinstance(assets, list):
        raise DownloadUnavailableError(f"kwok's release {url} has no 'assets' list")
    goos, arch = host_platform()
    name = f"kwok-{goos}-{arch}"
    entry = next((a for a in assets if isinstance(a, dict) and a.get("name") == name), None)
    if entry is None:
        raise DownloadUnavailableError(f"kwok's release {url} has no {name}")
    link, digest = entry.get("browser_download_url"), entry.get("digest")
    if not isinstance(link, str):
        raise DownloadUnavailableError(f"kwok's release {url}: {name} has no browser_download_url")
    algorithm, _, value = digest.partition(":") if isinstance(digest, str) else ("", "", "")
    if algorithm != "sha256" or len(value) != 64:
        raise DownloadUnavailableError(
            f"kwok's release {url}: {name} has no sha256 digest (digest={digest!r}), so its "
            "bytes cannot be checked"
        )
    return name, urllib.parse.urljoin(url, link), value.lower()


def download_kwok(version: str, *, log: Log | None = None) -> Path:
    """Download kwok ``version`` (``"v0.8.0"``) from its release, checked against its sha256.

    Example::

        path = download_kwok("v0.8.0")
    """
    target = kwok_dir(version) / "kwok"
    with _lock(target.with_name(".kwok.lock")):
        if target.is_file():
            return target
        _, url, sha256 = find_kwok_asset(version)
        fetch(url, target, sha256=sha256, log=log)
        target.chmod(0o755)
        return target
