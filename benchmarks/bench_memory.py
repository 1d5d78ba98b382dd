"""What the Foo controller's memory is made of, import layer by import layer.

Each row is a fresh interpreter that imports every layer up to its own (cumulative), then
reports its RSS, split as /proc/self/smaps splits it: the glibc heap (``[heap]``: malloc'd
blocks over 512 bytes), anonymous mappings (pymalloc's arenas of small Python objects, large
buffers), and file-backed pages (the interpreter, libcrypto, extension modules). The last
layer is examples/sample_controller's ``main`` (what the Foo controller imports before it
runs); its run-time part (caches, connections, buffers) is ``benchmarks/soak.py``'s.

    python benchmarks/bench_memory.py [--json build/bench/memory.json] [--chart FILE.svg]

Memory does not depend on the machine's load: one sample per layer is enough (a second run
gives the same figures to within a few hundred KB).
"""

# A benchmark reports by printing its table.
# ruff: noqa: T201

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import _svg
from _bytecode import compile_sources

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "sample_controller"

#: (label, statements): each layer's imports, run after every earlier layer's.
LAYERS: list[tuple[str, str]] = [
    ("interpreter", "pass"),
    ("asyncio + ssl (a default context)", "import asyncio, ssl; ssl.create_default_context()"),
    ("httpx", "import httpx"),
    ("pydantic", "import pydantic"),
    ("kubectrl", "import kubectrl"),
    ("kubectrl.client", "import kubectrl.client"),
    ("kubectrl.cache", "import kubectrl.cache"),
    ("kubectrl.runtime", "import kubectrl.runtime"),
    (
        "kubernetes.client.models (V1Deployment)",
        "from kubernetes.client.models import V1Deployment",
    ),
    ("the example's api (Foo)", "import api"),
    ("the example's controller and main", "import main"),
]

CHILD = """
import sys
sys.path.insert(0, {example!r})
{statements}
rss = {{}}
name = None
for line in open("/proc/self/smaps"):
    parts = line.split()
    if "-" in parts[0] and len(parts) >= 5 and ":" in parts[3]:
        name = parts[5] if len(parts) > 5 else "[anon]"
        kind = name if name in ("[heap]", "[anon]") else "file" if name.startswith("/") else "other"
    elif parts[0] == "Rss:":
        rss[kind] = rss.get(kind, 0) + int(parts[1])
import json
print(json.dumps({{"rss": rss, "modules": len(sys.modules),
                   "rich": "rich" in sys.modules}}))
"""


def measure(statements: list[str]) -> dict[str, object]:
    code = CHILD.format(example=str(EXAMPLE), statements="\n".join(statements))
    out = subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        capture_output=True,
        text=True,
        cwd=EXAMPLE,
        env=dict(os.environ),
    ).stdout
    result: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--chart", help="write an SVG bar chart of each layer's increment here")
    args = parser.parse_args()
    compile_sources()
    rows = []
    statements: list[str] = []
    previous = 0
    for label, statement in LAYERS:
        statements.append(statement)
        data = measure(statements)
        rss: dict[str, int] = data["rss"]  # type: ignore[assignment]
        total = sum(rss.values())
        rows.append(
            {
                "layer": label,
                "rss_kib": total,
                "added_kib": total - previous if previous else total,
                "heap_kib": rss.get("[heap]", 0),
                "anon_kib": rss.get("[anon]", 0),
                "file_kib": rss.get("file", 0),
                "modules": data["modules"],
                "rich_loaded": data["rich"],
            }
        )
        previous = total
    base = rows[0]["rss_kib"]
    print("| layer (cumulative) | RSS | added | above interpreter | heap / anon / file | mods |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['layer']} | {row['rss_kib'] / 1024:.1f} MB | +{row['added_kib'] / 1024:.1f} MB"
            f" | {(row['rss_kib'] - base) / 1024:.1f} MB | {row['heap_kib'] / 1024:.1f} / "
            f"{row['anon_kib'] / 1024:.1f} / {row['file_kib'] / 1024:.1f} MB | {row['modules']} |"
        )
    if any(row["rich_loaded"] for row in rows):
        print(
            "\nhttpx imported rich (and click, pygments) for its command line: installed here, "
            "they are not in a controller's image unless something else needs them."
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    if args.chart:
        bars = {
            str(row["layer"]): (row["added_kib"] / 1024,) * 3  # one sample: no spread
            for row in rows
        }
        svg = _svg.bar_chart(
            "Foo controller imports: RSS each layer adds",
            "MB",
            bars,  # type: ignore[arg-type]
            note="cumulative layers, one fresh interpreter each; memory does not depend on load",
        )
        Path(args.chart).write_text(svg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
