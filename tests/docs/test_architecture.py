"""docs/architecture.md's diagrams follow the code: every kubectrl name in them imports, and the
layers diagram shows every package the layers contract names. (The request path's diagram is
checked against a real request in tests/unit/client/test_request_path.py.)"""

from __future__ import annotations

import importlib
import re
import sys

import pytest
from docs_blocks import DOCS, ROOT, blocks, resolve

PAGE = DOCS / "architecture.md"
_MERMAID = re.compile(r"^```mermaid\n(.*?)^```", re.S | re.M)
_NAME = re.compile(r"\bkubectrl(?:\.[A-Za-z_]\w*)+")


def diagrams() -> list[str]:
    return _MERMAID.findall(PAGE.read_text(encoding="utf-8"))


def test_the_page_has_its_three_diagrams_and_no_python_block_runs_them() -> None:
    assert len(diagrams()) == 3
    assert blocks(PAGE) == []


def test_every_name_in_the_diagrams_exists() -> None:
    names = sorted({name for diagram in diagrams() for name in _NAME.findall(diagram)})
    assert len(names) > 20
    missing = []
    for name in names:
        try:
            resolve(name)
        except (ImportError, AttributeError) as err:
            missing.append(f"{name}: {type(err).__name__}: {err}")
    assert not missing, "\n".join(missing)


def test_resolve_rejects_a_name_that_does_not_exist() -> None:
    assert (
        resolve("kubectrl.cache.Reflector") is importlib.import_module("kubectrl.cache").Reflector
    )
    with pytest.raises(AttributeError):
        resolve("kubectrl.cache.NoSuchThing")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python 3.11+")
def test_the_layers_diagram_names_every_package_of_the_layers_contract() -> None:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    layered = [c for c in contracts if c["type"] == "layers" and not c.get("containers")]
    assert layered, "no top-level layers contract in pyproject.toml"
    packages = {
        package.strip()
        for contract in layered
        for layer in contract["layers"]
        for package in layer.split("|")
    }
    (layers_diagram,) = [d for d in diagrams() if "kubectrl.runtime<br/>" in d]
    assert sorted(p for p in packages if f'"{p}' not in layers_diagram) == []


def test_mkdocs_draws_mermaid_fences() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "- name: mermaid" in config
    assert "architecture.md" in config
