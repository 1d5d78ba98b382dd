"""mypy --strict passes on tests/typing: the assert_type checks there hold.

The files in this directory are checked statically, not run; this test runs the check so that a
plain ``pytest`` catches a regression in the client's (or cache's) overloads too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_mypy_strict_accepts_the_typing_tests() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "tests/typing"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
