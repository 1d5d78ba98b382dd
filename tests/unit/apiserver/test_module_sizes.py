"""The API core and the fake stay in modules of one job each: none grows past 800 lines
(the core's subpackages' modules included)."""

from __future__ import annotations

from pathlib import Path

import pytest

import kubectrl.apiserver
import kubectrl.testing

LIMIT = 800


@pytest.mark.parametrize("package", [kubectrl.apiserver, kubectrl.testing])
def test_no_module_is_over_the_limit(package: object) -> None:
    root = Path(str(getattr(package, "__file__", ""))).parent
    sizes = {
        p.relative_to(root).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
        for p in root.rglob("*.py")
    }
    assert sizes, f"no modules found in {root}"
    if package is kubectrl.apiserver:  # the subpackages' modules are counted
        assert any("/" in name for name in sizes), sorted(sizes)
    over = {name: n for name, n in sizes.items() if n > LIMIT}
    assert not over, f"modules over {LIMIT} lines in {root} (split them by job): {over}"
