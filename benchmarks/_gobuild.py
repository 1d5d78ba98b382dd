"""Builds the Go side of the comparison from the Go module proxy, cached like envtest's binaries.

- ``informer``: our client-go informer program (``go/informer``), built in ``go/`` whose
  ``go.mod``/``go.sum`` pin client-go.
- ``sample-controller``: k8s.io/sample-controller at the version ``go/go.mod`` pins (its
  ``tool`` line; ``go.sum`` checks the module's hash), upstream's ``main.go`` and
  ``controller.go`` as published, built from a temporary copy of the downloaded module with
  ``go/_samplecontroller/limits.go`` added (``-qps``/``-burst``/``-workers`` flags) and two
  lines of ``main.go`` edited to use them (:data:`MAIN_EDITS`): the rest config's QPS and burst
  set before the clientsets are made, the worker count in place of upstream's literal 2. Each
  edit must match exactly once, so a new upstream version that moves those lines fails the
  build instead of measuring something else.

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
SOURCES = ["go.mod", "go.sum", "informer/main.go", "_samplecontroller/limits.go"]
SAMPLE_CONTROLLER = "k8s.io/sample-controller"

#: The edits to upstream's main.go: (line as published, line built). Nothing else changes.
MAIN_EDITS = [
    (
        "\tkubeClient, err := kubernetes.NewForConfig(cfg)\n",
        "\tcfg.QPS, cfg.Burst = float32(*benchQPS), *benchBurst\n"
        "\tkubeClient, err := kubernetes.NewForConfig(cfg)\n",
    ),
    (
        "\tif err = controller.Run(ctx, 2); err != nil {\n",
        "\tif err = controller.Run(ctx, *benchWorkers); err != nil {\n",
    ),
]


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


def edit_main(source: str) -> str:
    """Upstream's ``main.go`` with :data:`MAIN_EDITS` applied; each must match exactly once."""
    for published, built in MAIN_EDITS:
        count = source.count(published)
        if count != 1:
            raise RuntimeError(
                f"{SAMPLE_CONTROLLER} main.go: expected the line {published.strip()!r} once, "
                f"found it {count} times; update MAIN_EDITS in benchmarks/_gobuild.py"
            )
        source = source.replace(published, built)
    return source


def digest(go: str) -> str:
    h = hashlib.sha256()
    for name in SOURCES:
        h.update(name.encode() + b"\0" + (GO_DIR / name).read_bytes() + b"\0")
    for published, built in MAIN_EDITS:
        h.update(published.encode() + b"\0" + built.encode() + b"\0")
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
        main_go = work / "main.go"
        main_go.write_text(edit_main(main_go.read_text()))
        shutil.copy(GO_DIR / "_samplecontroller" / "limits.go", work / "zz_kubectrl_limits.go")
        _run([go, *flags, str(paths["sample-controller"]), "."], work)
    return paths


if __name__ == "__main__":
    for name, path in build().items():
        print(name, path)  # noqa: T201
