"""The README's main command (`nox -s demo` runs this script) works from start to finish."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_demo_shows_the_foo_its_deployment_and_events_then_cleans_up() -> None:
    result = subprocess.run(
        [sys.executable, "examples/sample_controller/demo.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
        check=False,
    )
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "foo.samplecontroller.k8s.io/example-foo created" in out
    lines = out.splitlines()
    assert any(line.split()[:4] == ["example-foo", "example-foo", "1", "0"] for line in lines)
    assert any(line.split()[:4] == ["example-foo", "example-foo", "3", "0"] for line in lines)
    assert any(
        line.startswith("example-foo") and "0/3" in line and "Foo/example-foo" in line
        for line in lines
    )
    assert any(line.split()[:2] == ["Normal", "Synced"] for line in lines)
    assert out.rstrip().endswith("# done: no process or temporary directory left behind")
