"""The package docstring of :mod:`kubectrl.apiserver` maps the core's modules: every
subpackage and module it has, and none it does not have."""

from __future__ import annotations

import re
from pathlib import Path

import kubectrl.apiserver

ROOT = Path(str(kubectrl.apiserver.__file__)).parent


def modules_on_disk() -> set[str]:
    """Every subpackage and module of the core, as dotted paths below ``kubectrl.apiserver``."""
    found = set()
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            found.add(".".join(parts))
    return found


def modules_in_the_map() -> set[str]:
    doc = kubectrl.apiserver.__doc__ or ""
    return set(re.findall(r"``(_[a-z0-9_]+(?:\.[a-z0-9_]+)*)``", doc))


def test_the_module_map_names_every_module_and_no_other() -> None:
    on_disk, mapped = modules_on_disk(), modules_in_the_map()
    # The public module (the core served in process) is linked by its full name instead.
    public = {name for name in on_disk if not name.startswith("_")}
    assert public == {"inprocess"}
    for name in public:
        assert f":mod:`kubectrl.apiserver.{name}`" in (kubectrl.apiserver.__doc__ or "")
    on_disk -= public
    assert not on_disk - mapped, f"modules missing from the map: {sorted(on_disk - mapped)}"
    assert not mapped - on_disk, (
        f"the map names modules that do not exist: {sorted(mapped - on_disk)}"
    )


def test_the_core_is_grouped_into_a_few_subpackages() -> None:
    top = {p.name for p in ROOT.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
    packages = {name for name in top if not name.endswith(".py")}
    flat = {name for name in top if name.endswith(".py")} - {"__init__.py"}
    assert len(packages) <= 10, packages
    # The modules left at the top: the errors everything raises, the request types, and the
    # public face the testing kit imports them through.
    assert flat == {"_status.py", "_router.py", "inprocess.py"}
