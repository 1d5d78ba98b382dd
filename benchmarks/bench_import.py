"""Import time of ``kubectrl``, ``kubectrl.client`` and ``kubectrl.runtime``.

Each sample is a fresh interpreter that times its own ``import`` statement (so interpreter start
is not counted and nothing is cached in memory from an earlier sample); the table shows the
median and the range of the samples, the modules the import loads, and the packages that take
most of the time (``python -X importtime``, top-level entries of one more run). Run with
``nox -s bench`` or ``python benchmarks/bench_import.py [--samples N]``.
"""

# A benchmark reports by printing its table.
# ruff: noqa: T201

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

from _bytecode import compile_sources

MODULES = ["kubectrl", "kubectrl.client", "kubectrl.runtime"]

_CHILD = """
import json, sys, time
before = len(sys.modules)
start = time.perf_counter()
import {module}
elapsed = time.perf_counter() - start
print(json.dumps({{"seconds": elapsed, "modules": len(sys.modules) - before}}))
"""


def sample(module: str) -> tuple[float, int]:
    """Seconds the import of ``module`` takes in a fresh interpreter, and modules it loaded."""
    out = subprocess.run(
        [sys.executable, "-c", _CHILD.format(module=module)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result = json.loads(out.strip().splitlines()[-1])
    return float(result["seconds"]), int(result["modules"])


def _by_package(code: str) -> dict[str, int]:
    """Microseconds ``python -X importtime -c code`` spent in each top-level package entered
    from another package (cumulative at each entry, so a package's own imports count for it)."""
    err = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        check=True,
        capture_output=True,
        text=True,
    ).stderr
    return by_package(err)


def by_package(importtime: str) -> dict[str, int]:
    """:func:`_by_package` on the text ``-X importtime`` wrote."""
    entries: list[tuple[int, str, int]] = []
    for line in importtime.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.removeprefix("import time:").split("|")
        depth = (len(name) - len(name.lstrip()) - 1) // 2  # one space after "|", then two per level
        entries.append((depth, name.strip(), int(cumulative)))
    # The output is post-order (a module after its imports): reversed, a parent comes first.
    out: dict[str, int] = {}
    stack: list[tuple[int, str]] = []
    for depth, name, cumulative in reversed(entries):
        while stack and stack[-1][0] >= depth:
            stack.pop()
        package = name.split(".")[0]
        if not stack or stack[-1][1].split(".")[0] != package:
            out[package] = out.get(package, 0) + cumulative
        stack.append((depth, name))
    return out


def heaviest(module: str, count: int = 4) -> list[tuple[str, float]]:
    """The packages other than kubectrl that take most of ``import module`` (milliseconds),
    heaviest first; what a bare interpreter imports at start is left out."""
    startup = _by_package("pass")
    timed = _by_package(f"import {module}")
    ranked = sorted(
        (
            (name, us / 1000)
            for name, us in timed.items()
            if name not in startup and name != "kubectrl"
        ),
        key=lambda item: -item[1],
    )
    return ranked[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=9, help="fresh interpreters per module")
    args = parser.parse_args()
    compile_sources()
    if args.samples < 1:
        parser.error(f"--samples must be at least 1, got {args.samples}")
    python = sys.version.split()[0]
    print(f"import time: median of {args.samples} fresh interpreters (Python {python})")
    header = f"{'module':<18} {'median':>9} {'min-max':>15} {'modules':>8}  heaviest imports"
    print(header)
    print("-" * len(header))
    for module in MODULES:
        samples = [sample(module) for _ in range(args.samples)]
        seconds = [s for s, _ in samples]
        span = f"{min(seconds) * 1000:.0f}-{max(seconds) * 1000:.0f} ms"
        top = ", ".join(f"{name} {ms:.0f}" for name, ms in heaviest(module))
        print(
            f"{module:<18} {statistics.median(seconds) * 1000:>6.0f} ms {span:>15} "
            f"{samples[-1][1]:>8}  {top} (ms)"
        )


if __name__ == "__main__":
    main()
