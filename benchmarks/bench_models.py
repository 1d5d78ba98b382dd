"""Generation time and import time of the largest generated model module.

The largest CRD of the model generator's corpus (tests/data/crds/third_party/gen_massive.py:
about 2,200 properties, as CRDs embedding pod templates have) is turned into a module with
``kubectrl.models.from_crd``; the table shows the median and range of the generation time, the
module's size, and the median and range of its import time, each sample in a fresh interpreter
that times its own ``import`` (kubectrl and pydantic already imported, so the figure is the
module's own cost: building its pydantic classes). Run with ``nox -s bench`` or
``python benchmarks/bench_models.py [--samples N]``.
"""

# A benchmark reports by printing its table.
# ruff: noqa: T201

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GENERATOR = ROOT / "tests" / "data" / "crds" / "third_party" / "gen_massive.py"

_CHILD = """
import json, sys, time
sys.path.insert(0, {directory!r})
import kubectrl.resources, pydantic
start = time.perf_counter()
import {module}
elapsed = time.perf_counter() - start
print(json.dumps({{"seconds": elapsed}}))
"""


def definition() -> dict[str, Any]:
    """The largest corpus CRD, built by its script."""
    spec = importlib.util.spec_from_file_location("gen_massive", GENERATOR)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {GENERATOR}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    crd: dict[str, Any] = module.definition()
    return crd


def import_seconds(directory: Path, module: str) -> float:
    """Seconds ``import module`` takes in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", _CHILD.format(directory=str(directory), module=module)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return float(json.loads(out.strip().splitlines()[-1])["seconds"])


def _row(label: str, seconds: list[float], note: str) -> str:
    span = f"{min(seconds) * 1000:.0f}-{max(seconds) * 1000:.0f} ms"
    return f"{label:<22} {statistics.median(seconds) * 1000:>7.0f} ms {span:>15}  {note}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=5, help="samples of each figure")
    args = parser.parse_args()
    if args.samples < 1:
        parser.error(f"--samples must be at least 1, got {args.samples}")
    from kubectrl import models

    crd = definition()
    generation: list[float] = []
    text = ""
    for _ in range(args.samples):
        start = time.perf_counter()
        text = models.from_crd(crd)
        generation.append(time.perf_counter() - start)
    name = models.module_name(crd)
    with tempfile.TemporaryDirectory() as directory:
        Path(directory, f"{name}.py").write_text(text, encoding="utf-8")
        imports = [import_seconds(Path(directory), name) for _ in range(args.samples)]
    classes = text.count("\nclass ")
    print(f"kubectrl.models: {crd['metadata']['name']}, median of {args.samples} samples")
    header = f"{'step':<22} {'median':>10} {'min-max':>15}  size"
    print(header)
    print("-" * len(header))
    print(_row("generate (from_crd)", generation, f"{len(text.splitlines())} lines"))
    print(_row("import (fresh process)", imports, f"{classes} classes"))


if __name__ == "__main__":
    main()
