"""Where kubectrl.envtest keeps what it builds and downloads."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir"]


def cache_dir() -> Path:
    """kubectrl's cache directory (binaries are kept under ``bin/``)."""
    if explicit := os.environ.get("KUBECTRL_CACHE_DIR"):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kubectrl"
