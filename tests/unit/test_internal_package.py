"""kubectrl._internal, the shared private helpers: its docstring maps every module it has, and
no module of the library outside it imports another package's private module (the
import-linter contract in pyproject.toml checks the imports; this checks the map)."""

from __future__ import annotations

import re
from pathlib import Path

import kubectrl._internal

ROOT = Path(str(kubectrl._internal.__file__)).parent


def test_the_map_names_every_module_and_no_other() -> None:
    on_disk = {path.stem for path in ROOT.glob("*.py")} - {"__init__"}
    doc = kubectrl._internal.__doc__ or ""
    mapped = set(re.findall(r"^- ``([a-z_]+)``", doc, re.M))
    assert on_disk == mapped, (sorted(on_disk - mapped), sorted(mapped - on_disk))
