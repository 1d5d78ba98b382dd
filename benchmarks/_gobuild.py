"""Builds the Go side of the comparison from the Go module proxy, cached like envtest's binaries.

- ``informer``: our client-go informer program (``go/informer``), built in ``go/`` whose
  ``go.mod``/``go.sum`` pin client-go.
- ``sample-controller``: k8s.io/sample-controller at the version ``go/go.mod`` pins (its
  ``tool`` line; ``go.sum`` checks the module's hash), built from a temporary copy of the
  downloaded module whose ``main.go`` is replaced by ``go/_samplecontroller/main.go`` (the same
  wiring with ``-qps``/``-burst``/``-workers`` flags, so both controllers run at equal client
  limits). The upstream ``controller.go`` is built unchanged.

Results go to ``<kubectrl cache>/bin/bench-<digest>/``; the digest covers the pins, our sources
and the Go version, so an unchanged tree builds once. Nothing fetched is written to the repository.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from kubectrl.envtest import cache_dir

GO_DIR = Path(__file__).resolve().parent / "go"
SOURCES = ["go.mod", "go.sum", "informer/main.go", "_samplecontroller/main.go"]
SAMPLE_CONTROLLER = "k8s.io/sample-controller"


def _go() -> str:
    go = shutil.which("go")
    if go is None:
        raise RuntimeError("no `go` on PATH: install Go >= 1.26 to build the Go peers")
    return go


def _run(cmd: list[str], cwd: Path) -> str:
    env = dict(os.environ, GOFLAGS="-mod=readonly -buildvcs=false")
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-30:])
        raise RuntimeError(f"`{' '.join(cmd)}` failed in {cwd} (exit {proc.returncode}):\n{tail}")
    return proc.stdout


def digest(go: str) -> str:
    h = hashlib.sha256()
    for name in SOURCES:
        h.update(name.encode() + b"\0" + (GO_DIR / name).read_bytes() + b"\0")
    h.update(_run([go, "version"], GO_DIR).encode())
    return h.hexdigest()[:12]


def build(log: object = print) -> dict[str, Path]:
    """Paths of ``informer`` and ``sample-controller``, building them on the first call."""
    go = _go()
    target = cache_dir() / "bin" / f"bench-{digest(go)}"
    paths = {name: target / name for name in ("informer", "sample-controller")}
    if all(p.is_file() for p in paths.values()):
        return paths
    target.mkdir(parents=True, exist_ok=True)
    flags = ["build", "-trimpath", "-ldflags=-s -w", "-o"]
    log(f"bench: building the client-go informer program into {target}")  # type: ignore[operator]
    _run([go, *flags, str(paths["informer"]), "./informer"], GO_DIR)
    info = json.loads(_run([go, "mod", "download", "-json", SAMPLE_CONTROLLER], GO_DIR))
    log(f"bench: building {SAMPLE_CONTROLLER} {info['Version']}")  # type: ignore[operator]
    with tempfile.TemporaryDirectory(prefix="kubectrl-bench-sc-") as tmp:
        work = Path(tmp) / "sample-controller"
        shutil.copytree(info["Dir"], work)
        for path in [work, *work.rglob("*")]:
            path.chmod(path.stat().st_mode | 0o200)
        shutil.copy(GO_DIR / "_samplecontroller" / "main.go", work / "main.go")
        _run([go, *flags, str(paths["sample-controller"]), "."], work)
    return paths


if __name__ == "__main__":
    for name, path in build().items():
        print(name, path)  # noqa: T201
