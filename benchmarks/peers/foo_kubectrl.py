"""kubectrl's Foo controller (examples/sample_controller) at the client limits the driver asks.

The example's ``main`` with its kubeconfig loader wrapped to set the client's rate limit (the Go
side gets the same numbers through ``-qps``/``-burst``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

EXAMPLE = Path(
    os.environ.get("KUBECTRL_BENCH_EXAMPLE")
    or Path(__file__).resolve().parents[2] / "examples" / "sample_controller"
)
sys.path.insert(0, str(EXAMPLE))

import main as sample  # noqa: E402

from kubectrl.client import ClientConfig, RateLimit  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--kubeconfig", required=True)
parser.add_argument("--qps", type=float, default=1000)
parser.add_argument("--burst", type=int, default=1000)
parser.add_argument("--workers", type=int, default=2)
args = parser.parse_args()

_load = sample.load_kubeconfig


def load_kubeconfig(path: str | None = None, *, context: str | None = None) -> ClientConfig:
    config = _load(path, context=context)
    return config.with_options(rate_limit=RateLimit(qps=args.qps, burst=args.burst))


sample.load_kubeconfig = load_kubeconfig  # type: ignore[assignment]
sys.exit(
    sample.main(
        [
            "--kubeconfig",
            args.kubeconfig,
            "--workers",
            str(args.workers),
            "--metrics-bind-address",
            "0",
        ]
    )
)
