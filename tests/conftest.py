"""Collection rules for the whole test tree."""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Docstring examples are collected from the library only.

    With ``--doctest-modules`` pytest would import every ``.py`` file under ``tests/``, including
    helper scripts that tests run as subprocesses and that read their environment when imported.
    Test modules (``test_*.py``) and conftest files are collected as usual.
    """
    if collection_path.suffix != ".py":
        return None
    if collection_path.name.startswith("test_") or collection_path.name == "conftest.py":
        return None
    tests_dir = Path(__file__).parent
    if tests_dir in collection_path.parents:
        return True
    return None
