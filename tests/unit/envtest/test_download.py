"""Downloading envtest binaries as setup-envtest does, against a loopback server (no internet).

The index format and the archive layout are controller-tools' (``envtest-releases.yaml``,
``envtest-<version>-<os>-<arch>.tar.gz`` holding ``controller-tools/envtest/<binary>``), as read by
controller-runtime ``tools/setup-envtest/remote/http_client.go`` and unpacked by
``tools/setup-envtest/store/store.go``.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import random
import subprocess
import sys
import tarfile
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from kubectrl.envtest import BinaryNotFoundError, _download
from kubectrl.envtest._binaries import ALL_SPECS, KWOK, find_binaries, find_binary, specs_for
from kubectrl.envtest._download import (
    DigestMismatchError,
    envtest_dir,
    host_platform,
    setup_envtest_dir,
)

RELEASE = specs_for("1.36")[1].version()  # v1.36.3
GOOS, ARCH = host_platform()
ARCHIVE = f"envtest-{RELEASE}-{GOOS}-{ARCH}.tar.gz"


def make_archive() -> bytes:
    """An archive laid out as controller-tools' (a directory prefix, 0555-ish modes)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name in ("etcd", "kube-apiserver", "kubectl"):
            # Big enough that a cut halfway leaves a partial file to resume.
            data = f"#!/bin/sh\necho {name}\n".encode() + random.Random(name).randbytes(200_000)
            info = tarfile.TarInfo(f"controller-tools/envtest/{name}")
            info.size = len(data)
            info.mode = 0o555
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@dataclass
class Server:
    """What the loopback server serves, and what it was asked."""

    files: dict[str, bytes] = field(default_factory=dict)
    requests: list[tuple[str, str | None]] = field(default_factory=list)  # (path, Range header)
    #: Close the connection after this many bytes of the first archive response.
    cut_first_at: int | None = None
    ignore_range: bool = False
    #: Send bodies without a Content-Length (ended by closing), as a stream of unknown size.
    unsized: bool = False
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def gets(self, suffix: str) -> list[tuple[str, str | None]]:
        return [r for r in self.requests if r[0].endswith(suffix)]


def _handler(state: Server) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            with state.lock:
                state.requests.append((path, self.headers.get("Range")))
                first_archive = len(state.gets(".tar.gz")) == 1 and path.endswith(".tar.gz")
            data = state.files.get(path)
            if data is None:
                self.send_error(404)
                return
            start = 0
            ranged = self.headers.get("Range")
            if ranged and not state.ignore_range:
                start = int(ranged.removeprefix("bytes=").split("-")[0])
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            else:
                self.send_response(200)
            body = data[start:]
            if state.unsized:
                self.end_headers()
                self.wfile.write(body)
                self.close_connection = True
                return
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if first_archive and state.cut_first_at is not None:
                self.wfile.write(body[: state.cut_first_at])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(body)

    return Handler


@pytest.fixture
def server() -> Iterator[Server]:
    state = Server()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    archive = make_archive()
    state.files[f"/archives/{ARCHIVE}"] = archive
    publish_index(state, hashlib.sha512(archive).hexdigest())
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


def publish_index(state: Server, digest: str, version: str = RELEASE) -> None:
    index = {
        "releases": {
            version: {
                f"envtest-{version}-{GOOS}-{ARCH}.tar.gz": {
                    "hash": digest,
                    # Relative links are resolved against the index's URL (a mirror's layout).
                    "selfLink": f"archives/envtest-{version}-{GOOS}-{ARCH}.tar.gz",
                }
            }
        }
    }
    state.files["/envtest-releases.yaml"] = yaml.safe_dump(index).encode()


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, server: Server) -> None:
    for spec in ALL_SPECS:
        monkeypatch.delenv(spec.env_var, raising=False)
    for var in ("KUBEBUILDER_ASSETS", "KUBECTRL_ENVTEST_DOWNLOAD", "KUBECTRL_ENVTEST_RELEASE_URL"):
        monkeypatch.delenv(var, raising=False)
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KUBECTRL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KUBECTRL_SETUP_ENVTEST_STORE", str(tmp_path / "setup-envtest"))
    monkeypatch.setenv("KUBECTRL_ENVTEST_INDEX_URL", f"{server.url}/envtest-releases.yaml")
    monkeypatch.setenv("KUBECTRL_ENVTEST_RELEASE_URL", f"{server.url}/release")
    monkeypatch.setenv("KUBECTRL_ENVTEST_KWOK_URL", f"{server.url}/kwok/releases/tags")
    empty = tmp_path / "empty-path"  # no go, no binaries on PATH
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


def test_a_fresh_cache_downloads_verifies_and_unpacks_then_reuses(server: Server) -> None:
    lines: list[str] = []
    found = find_binaries(version="1.36", kubectl=True, log=lines.append)
    directory = envtest_dir(RELEASE)
    assert found.kube_apiserver == directory / "kube-apiserver"
    assert found.etcd == directory / "etcd"
    assert found.sources == {
        "etcd": "download",
        "kube-apiserver": "download",
        "kubectl": "download",
    }
    assert found.kube_apiserver.read_bytes().startswith(b"#!/bin/sh\necho kube-apiserver\n")
    assert found.kube_apiserver.stat().st_mode & 0o111
    # A progress line with the size and the rate.
    (done,) = [line for line in lines if f"downloaded {ARCHIVE}" in line]
    assert " KB at " in done
    assert "/s" in done
    assert not list(directory.parent.glob("*.part"))
    assert not list(directory.parent.glob("*.tar.gz"))
    # The second time: nothing is fetched.
    again = find_binaries(version="1.36", kubectl=True, log=lines.append)
    assert again.kube_apiserver == found.kube_apiserver
    assert len(server.gets(".tar.gz")) == 1


def test_a_wrong_digest_is_refused_and_the_partial_file_removed(server: Server) -> None:
    publish_index(server, "0" * 128)
    with pytest.raises(DigestMismatchError) as info:
        find_binaries(version="1.36", log=lambda _: None)
    message = str(info.value)
    assert f"{server.url}/archives/{ARCHIVE}" in message
    served = server.files[f"/archives/{ARCHIVE}"]
    assert "0" * 128 in message
    assert hashlib.sha512(served).hexdigest() in message
    directory = envtest_dir(RELEASE)
    assert not directory.exists()
    assert not list(directory.parent.glob(f"{ARCHIVE}*"))  # no .part, no archive


def test_a_dropped_download_is_resumed_with_a_range_request(server: Server) -> None:
    server.cut_first_at = 100_000
    lines: list[str] = []
    found = find_binaries(version="1.36", log=lines.append)
    assert found.kube_apiserver_source == "download"
    ranges = [header for _, header in server.gets(".tar.gz")]
    assert ranges == [None, "bytes=100000-"]
    assert any("resuming at 100000 bytes" in line for line in lines)


def test_a_server_ignoring_range_restarts_the_download(server: Server) -> None:
    server.cut_first_at = 100_000
    server.ignore_range = True
    found = find_binaries(version="1.36", log=lambda _: None)
    assert found.etcd.read_bytes().startswith(b"#!/bin/sh\necho etcd\n")  # digest checked too
    assert len(server.gets(".tar.gz")) == 2


def test_two_processes_downloading_at_once_make_one_copy(server: Server) -> None:
    script = (
        "from kubectrl.envtest._binaries import find_binaries\n"
        "print(find_binaries(version='1.36', log=lambda _: None).kube_apiserver)\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [proc.communicate(timeout=60) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], outputs
    assert outputs[0][0] == outputs[1][0] == f"{envtest_dir(RELEASE) / 'kube-apiserver'}\n"
    assert len(server.gets(".tar.gz")) == 1


def test_a_proxy_setting_is_honoured(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    proxied: list[str] = []

    class Proxy(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            proxied.append(self.path)  # a proxy is sent the absolute URL
            direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            headers = {"Range": self.headers["Range"]} if self.headers.get("Range") else {}
            with direct.open(urllib.request.Request(self.path, headers=headers)) as upstream:
                body = upstream.read()
                self.send_response(upstream.status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{proxy.server_address[1]}")
        found = find_binaries(version="1.36", log=lambda _: None)
    finally:
        proxy.shutdown()
        proxy.server_close()
    assert found.kube_apiserver_source == "download"
    assert proxied == [
        f"{server.url}/envtest-releases.yaml",
        f"{server.url}/archives/{ARCHIVE}",
    ]


def test_no_archive_for_the_version_falls_back_to_the_build_saying_why(server: Server) -> None:
    publish_index(server, "0" * 128, version="v1.99.0")
    lines: list[str] = []
    with pytest.raises(BinaryNotFoundError, match="no `go` on PATH"):
        find_binaries(version="1.36", log=lines.append)
    (why,) = [line for line in lines if "cannot download" in line]
    assert f"has no {ARCHIVE}" in why
    assert why.endswith("building instead")


def test_no_network_falls_back_to_the_build_saying_why(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A closed port on loopback stands in for an unreachable host.
    monkeypatch.setenv("KUBECTRL_ENVTEST_INDEX_URL", "http://127.0.0.1:9/envtest-releases.yaml")
    lines: list[str] = []
    with pytest.raises(BinaryNotFoundError, match="no `go` on PATH"):
        find_binaries(version="1.36", log=lines.append)
    (why,) = [line for line in lines if "cannot download" in line]
    assert "127.0.0.1:9" in why


def test_setup_envtests_store_is_reused(server: Server) -> None:
    store = setup_envtest_dir(RELEASE)
    assert store.name == f"{RELEASE.lstrip('v')}-{GOOS}-{ARCH}"
    store.mkdir(parents=True)
    for name in ("etcd", "kube-apiserver", "kubectl"):
        (store / name).write_text("#!/bin/sh\n")
        (store / name).chmod(0o555)
    found = find_binaries(version="1.36", log=lambda _: None)
    assert found.kube_apiserver == store / "kube-apiserver"
    assert found.kube_apiserver_source == "setup-envtest"
    assert server.requests == []


def test_controller_manager_and_scheduler_come_from_the_release_bucket(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECTRL_ENVTEST_RELEASE_URL", f"{server.url}/release")
    for name in ("kube-controller-manager", "kube-scheduler"):
        data = f"#!/bin/sh\necho {name}\n".encode()
        path = f"/release/{RELEASE}/bin/{GOOS}/{ARCH}/{name}"
        server.files[path] = data
        server.files[path + ".sha512"] = f"{hashlib.sha512(data).hexdigest()}  {name}\n".encode()
    path = _download.download_release_binary("kube-scheduler", RELEASE, log=lambda _: None)
    assert path.read_bytes() == b"#!/bin/sh\necho kube-scheduler\n"
    assert path.stat().st_mode & 0o111
    server.files[f"/release/{RELEASE}/bin/{GOOS}/{ARCH}/kube-controller-manager"] = b"evil"
    with pytest.raises(DigestMismatchError, match="kube-controller-manager"):
        _download.download_release_binary("kube-controller-manager", RELEASE, log=lambda _: None)
    assert not list(path.parent.glob("kube-controller-manager*"))


def test_only_http_urls_are_fetched(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    index = tmp_path / "index.yaml"
    index.write_text("releases: {}\n")
    monkeypatch.setenv("KUBECTRL_ENVTEST_INDEX_URL", index.as_uri())
    with pytest.raises(_download.DownloadUnavailableError, match="only http"):
        _download.find_archive(RELEASE)


def test_the_download_switch_is_read_strictly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECTRL_ENVTEST_DOWNLOAD", "0")
    assert not _download.download_enabled()
    monkeypatch.setenv("KUBECTRL_ENVTEST_DOWNLOAD", "maybe")
    with pytest.raises(ValueError, match="KUBECTRL_ENVTEST_DOWNLOAD='maybe'"):
        _download.download_enabled()


def test_cluster_mode_without_network_says_why_in_one_line(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECTRL_ENVTEST_INDEX_URL", "http://127.0.0.1:9/envtest-releases.yaml")
    monkeypatch.setenv("KUBECTRL_ENVTEST_RELEASE_URL", "http://127.0.0.1:9/release")
    monkeypatch.setenv("KUBECTRL_ENVTEST_KWOK_URL", "http://127.0.0.1:9/kwok")
    lines: list[str] = []
    with pytest.raises(BinaryNotFoundError, match="no `go` on PATH"):
        find_binaries(version="1.36", cluster=True, log=lines.append)
    (why,) = [line for line in lines if "cannot download" in line]
    # Each source is tried (a firewall may let one through), each failure named in the one line.
    assert "etcd, kube-apiserver v1.36.3 (GET http://127.0.0.1:9/envtest-releases.yaml" in why
    assert "kube-controller-manager, kube-scheduler v1.36.3 (GET http://127.0.0.1:9/release" in why
    assert f"kwok {KWOK.version()} (GET http://127.0.0.1:9/kwok/{KWOK.version()}" in why
    assert why.endswith("; building instead")


def publish_kwok(state: Server, data: bytes, digest: str | None) -> str:
    """kwok's release as GitHub's "get a release by tag name" describes it (``digest`` is
    ``"sha256:<hex>"``, computed by GitHub on upload; ``None`` for an asset it has none for)."""
    name = f"kwok-{GOOS}-{ARCH}"
    state.files[f"/kwok/download/{KWOK.version()}/{name}"] = data
    release = {
        "tag_name": KWOK.version(),
        "assets": [
            {"name": f"kwokctl-{GOOS}-{ARCH}", "browser_download_url": "elsewhere"},
            {
                "name": name,
                # Relative to the release's URL, as a mirror may lay it out.
                "browser_download_url": f"../../download/{KWOK.version()}/{name}",
                "digest": digest,
            },
        ],
    }
    state.files[f"/kwok/releases/tags/{KWOK.version()}"] = json.dumps(release).encode()
    return name


def test_kwok_comes_from_its_release_checked_against_githubs_digest(server: Server) -> None:
    """kwok publishes bare binaries and no checksum file (kwok ``hack/releases.sh`` uploads
    ``kwok-<os>-<arch>`` with ``gh release upload``); the release API's asset ``digest`` is
    what vouches for them."""
    data = b"#!/bin/sh\necho kwok\n"
    publish_kwok(server, data, "sha256:" + hashlib.sha256(data).hexdigest())
    lines: list[str] = []
    path = _download.download_kwok(KWOK.version(), log=lines.append)
    assert path.read_bytes() == data
    assert path.stat().st_mode & 0o111
    assert path == _download.kwok_dir(KWOK.version()) / "kwok"
    assert any("downloaded kwok" in line for line in lines)
    # Found without a request the next time.
    before = len(server.requests)
    found = find_binary(KWOK, build=False)
    assert found == (path, "download")
    assert len(server.requests) == before


def test_a_kwok_asset_without_a_digest_is_not_downloaded(server: Server) -> None:
    publish_kwok(server, b"unverifiable", None)
    with pytest.raises(_download.DownloadUnavailableError, match="no sha256 digest"):
        _download.download_kwok(KWOK.version(), log=lambda _: None)
    assert not server.gets(f"kwok-{GOOS}-{ARCH}")


def test_a_kwok_binary_with_a_wrong_digest_is_refused_and_removed(server: Server) -> None:
    publish_kwok(server, b"evil", "sha256:" + hashlib.sha256(b"good").hexdigest())
    with pytest.raises(DigestMismatchError, match="sha256"):
        _download.download_kwok(KWOK.version(), log=lambda _: None)
    assert not list(_download.kwok_dir(KWOK.version()).glob("kwok*"))


def test_an_oversized_index_is_refused(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """A broken or hostile mirror answering with an endless index cannot fill the memory."""
    monkeypatch.setattr(_download, "MAX_INDEX_BYTES", 1000)
    server.files["/envtest-releases.yaml"] = b"releases: {}\n" + b"#" * 5000
    with pytest.raises(_download.DownloadUnavailableError, match="over 1000 bytes"):
        _download.find_archive(RELEASE)


@pytest.mark.parametrize("announced", [True, False], ids=["content-length", "streamed"])
def test_an_oversized_download_is_refused_and_removed(
    server: Server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, announced: bool
) -> None:
    """Nor the disk: a download over the bound stops there, announced or not."""
    monkeypatch.setattr(_download, "MAX_DOWNLOAD_BYTES", 100_000)
    server.unsized = not announced
    url = f"{server.url}/archives/{ARCHIVE}"
    dest = tmp_path / "out.tar.gz"
    with pytest.raises(_download.OversizedDownloadError, match="100000"):
        _download.fetch(url, dest, sha512="0" * 128, log=lambda _: None)
    assert not dest.exists()
    assert not dest.with_name(dest.name + ".part").exists()
