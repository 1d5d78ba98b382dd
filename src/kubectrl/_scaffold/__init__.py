"""The project scaffolder behind ``python -m kubectrl init`` and ``create api``."""

from __future__ import annotations

from pathlib import Path

__all__ = ["ScaffoldError", "create_api", "init"]


class ScaffoldError(Exception):
    """What stops a scaffold, in one line (a file it would overwrite, a bad name...)."""


def init(root: Path, name: str, *, domain: str) -> list[Path]:
    """Scaffold a project named ``name`` in ``root``; the files written."""
    raise ScaffoldError("init: not available yet")


def create_api(
    root: Path,
    *,
    group: str,
    version: str,
    kind: str,
    plural: str = "",
    namespaced: bool = True,
    webhooks: bool = False,
) -> list[Path]:
    """Add a kind to the project in ``root``; the files written or changed."""
    raise ScaffoldError("create api: not available yet")
