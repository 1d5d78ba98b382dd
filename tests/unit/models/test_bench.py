"""benchmarks/bench_models.py runs and reports both figures for the largest corpus module."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "bench_models.py"


def test_the_benchmark_reports_generation_and_import_time() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--samples", "1"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("kubectrl.models: massives.corpus.kubectrl.test")
    assert any(line.startswith("generate (from_crd)") and " ms " in line for line in lines)
    assert any(line.startswith("import (fresh process)") and "classes" in line for line in lines)
