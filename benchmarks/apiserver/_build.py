"""Builds the Go side of the API-server benchmark from the Go module proxy, cached.

- ``sample-apiserver``: ``k8s.io/sample-apiserver`` as published, at the version ``go/go.mod``
  pins (its ``tool`` line; ``go.sum`` checks the module's hash), unchanged;
- ``loadgen``: our load generator (``go/loadgen``), the client both servers are measured with.

Results go to ``<kubectrl cache>/bin/bench-apiserver-<digest>/``; the digest covers the pins,
our sources and the Go version, so an unchanged tree builds once. Nothing fetched is written to
the repository.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from kubectrl.envtest import cache_dir

GO_DIR = Path(__file__).resolve().parent / "go"
SOURCES = ["go.mod", "go.sum", "loadgen/main.go"]
SAMPLE_APISERVER = "k8s.io/sample-apiserver"


def go_binary() -> str | None:
    """The ``go`` on PATH, or ``None``."""
    return shutil.which("go")


def _run(cmd: list[str]) -> str:
    env = dict(os.environ, GOFLAGS="-mod=readonly -buildvcs=false")
    proc = subprocess.run(cmd, cwd=GO_DIR, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-30:])
        raise RuntimeError(
            f"`{' '.join(cmd)}` failed in {GO_DIR} (exit {proc.returncode}):\n{tail}"
        )
    return proc.stdout


def digest(go: str) -> str:
    """What the built binaries depend on: our sources, the pins and the Go version."""
    h = hashlib.sha256()
    for name in SOURCES:
        h.update(name.encode() + b"\0" + (GO_DIR / name).read_bytes() + b"\0")
    h.update(_run([go, "version"]).encode())
    return h.hexdigest()[:12]


def build(log: object = print) -> dict[str, Path]:
    """Paths of ``sample-apiserver`` and ``loadgen``, building them on the first call."""
    go = go_binary()
    if go is None:
        raise RuntimeError("no `go` on PATH: install Go >= 1.26 to build the Go side")
    target = cache_dir() / "bin" / f"bench-apiserver-{digest(go)}"
    paths = {name: target / name for name in ("sample-apiserver", "loadgen")}
    if all(p.is_file() for p in paths.values()):
        return paths
    target.mkdir(parents=True, exist_ok=True)
    flags = ["build", "-trimpath", "-ldflags=-s -w", "-o"]
    log(f"bench: building {SAMPLE_APISERVER} and the load generator into {target}")  # type: ignore[operator]
    _run([go, *flags, str(paths["loadgen"]), "./loadgen"])
    _run([go, *flags, str(paths["sample-apiserver"]), SAMPLE_APISERVER])
    return paths


if __name__ == "__main__":
    for name, path in build().items():
        print(name, path)  # noqa: T201
