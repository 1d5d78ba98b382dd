"""Serve an envtest index and archive made from local binaries, as a mirror would.

For a company mirror and for measuring the download path without the internet:

    python scripts/envtest_mirror.py --version v1.36.3 --bin-dir DIR --out /tmp/mirror --port 8765

packs DIR's etcd, kube-apiserver and kubectl as ``envtest-v1.36.3-<os>-<arch>.tar.gz`` (laid out
as controller-tools' archives: ``controller-tools/envtest/<binary>``), writes
``envtest-releases.yaml`` beside it with the archive's sha512, and serves ``--out`` on
127.0.0.1. Point kubectrl at it with
``KUBECTRL_ENVTEST_INDEX_URL=http://127.0.0.1:8765/envtest-releases.yaml``. With ``--kwok FILE``
it also serves that kwok binary as GitHub describes a release (``kwok/releases/tags/<tag>``, the
asset's sha256 in ``digest``): ``KUBECTRL_ENVTEST_KWOK_URL=http://127.0.0.1:8765/kwok/releases/tags``.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import http.server
import json
import tarfile
from pathlib import Path

import yaml

from kubectrl.envtest._binaries import KWOK
from kubectrl.envtest._download import ENVTEST_ARCHIVE_BINARIES, host_platform


def pack(version: str, bin_dir: Path, out: Path) -> Path:
    goos, arch = host_platform()
    name = f"envtest-{version}-{goos}-{arch}.tar.gz"
    out.mkdir(parents=True, exist_ok=True)
    archive = out / name
    with tarfile.open(archive, "w:gz") as tar:
        for binary in ENVTEST_ARCHIVE_BINARIES:
            tar.add(bin_dir / binary, arcname=f"controller-tools/envtest/{binary}")
    digest = hashlib.sha512(archive.read_bytes()).hexdigest()
    index = {"releases": {version: {name: {"hash": digest, "selfLink": name}}}}
    (out / "envtest-releases.yaml").write_text(yaml.safe_dump(index))
    return archive


def pack_kwok(binary: Path, out: Path) -> Path:
    goos, arch = host_platform()
    name = f"kwok-{goos}-{arch}"
    asset = out / "kwok" / "download" / KWOK.version() / name
    asset.parent.mkdir(parents=True, exist_ok=True)
    asset.write_bytes(binary.read_bytes())
    release = {
        "tag_name": KWOK.version(),
        "assets": [
            {
                "name": name,
                "browser_download_url": f"../../download/{KWOK.version()}/{name}",
                "digest": "sha256:" + hashlib.sha256(asset.read_bytes()).hexdigest(),
            }
        ],
    }
    description = out / "kwok" / "releases" / "tags" / KWOK.version()
    description.parent.mkdir(parents=True, exist_ok=True)
    description.write_text(json.dumps(release))
    return asset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", required=True, help="e.g. v1.36.3")
    parser.add_argument("--bin-dir", type=Path, required=True, help="etcd, kube-apiserver, kubectl")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--kwok", type=Path, help="a kwok binary to serve as its release")
    args = parser.parse_args()
    archive = pack(args.version, args.bin_dir, args.out)
    if args.kwok:
        print(pack_kwok(args.kwok, args.out), flush=True)  # noqa: T201
    print(f"{archive} ({archive.stat().st_size / 1e6:.1f} MB)", flush=True)  # noqa: T201
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(args.out))
    with http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler) as server:
        print(f"serving http://127.0.0.1:{args.port}/envtest-releases.yaml", flush=True)  # noqa: T201
        server.serve_forever()


if __name__ == "__main__":
    main()
