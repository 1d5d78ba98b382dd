"""Bytecode for the code under measurement, as a ``pip install`` leaves it.

pip writes ``.pyc`` files when it installs a package, so a user's controller never compiles
kubectrl's sources when it starts. A development checkout may have none, or stale ones, and
with ``PYTHONDONTWRITEBYTECODE`` set (some shells and CI images set it) Python compiles every
module again in every process without writing it back: on a 2-core machine that added about
0.2 s of CPU to ``import kubectrl`` + ``load_config()`` (415-483 ms against 191-298 ms with
bytecode) and to every Python peer's start. The benches compile first, so each process reads
bytecode, as the peers installed from PyPI (lightkube, kopf) already do.
"""

from __future__ import annotations

import compileall
from pathlib import Path

import kubectrl

__all__ = ["compile_sources"]

ROOT = Path(__file__).resolve().parents[1]


def compile_sources() -> None:
    """Write up-to-date ``.pyc`` files for kubectrl and the examples (a no-op when they are)."""
    for path in (Path(kubectrl.__file__).parent, ROOT / "examples"):
        if not compileall.compile_dir(path, quiet=1):
            raise SystemExit(f"compiling {path} failed: the benches measure bytecode")
