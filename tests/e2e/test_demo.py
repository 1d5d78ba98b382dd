"""The README's main command (`nox -s demo` runs this script) works from start to finish.

The demo goes through the controller's routine failures too (an edit landing while the controller
syncs the previous one; a Deployment name taken by someone else, retried with backoff), and its
whole output, the controller's log included, shows no traceback: expected errors are one line.
"""

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
    assert "Traceback" not in out + result.stderr, result.stderr
    assert "foo.samplecontroller.k8s.io/example-foo created" in out
    lines = out.splitlines()
    assert any(line.split()[:4] == ["example-foo", "example-foo", "1", "0"] for line in lines)
    assert any(line.split()[:4] == ["example-foo", "example-foo", "3", "0"] for line in lines)
    assert any(
        line.startswith("example-foo") and "0/3" in line and "Foo/example-foo" in line
        for line in lines
    )
    assert any(line.split()[:2] == ["Normal", "Synced"] for line in lines)
    # The Deployment someone else owns: left alone, a Warning, retried (count >= 2).
    assert any(
        line.split()[:3] == ["Warning", "ErrResourceExists", "foo/intruder"]
        and int(line.split()[3]) >= 2
        and 'Resource "taken" already exists and is not managed by Foo' in line
        for line in lines
    )
    assert any(line.split()[:1] == ["taken"] and line.rstrip().endswith("/") for line in lines)
    assert out.rstrip().endswith("# done: no process or temporary directory left behind")
