"""The public surface: sorted and complete __all__, public module paths, runnable examples."""

from __future__ import annotations

import doctest
import importlib
import inspect
import re
from pathlib import Path

import pytest

import kubectrl.workqueue as workqueue

PRIVATE_MODULES = [
    "kubectrl.workqueue._queue",
    "kubectrl.workqueue._delaying",
    "kubectrl.workqueue._rate_limiting",
    "kubectrl.workqueue._rate_limiters",
    "kubectrl.workqueue._metrics",
    "kubectrl.workqueue._priority",
]
DOCS = Path(__file__).parents[3] / "docs" / "workqueue.md"


def test_all_is_sorted_and_complete() -> None:
    # ruff's order (RUF022): constants first, then the rest, each sorted.
    assert workqueue.__all__ == sorted(workqueue.__all__, key=lambda n: (not n.isupper(), n))
    exported = set(workqueue.__all__)
    for module_name in PRIVATE_MODULES:
        module = importlib.import_module(module_name)
        missing = set(module.__all__) - exported
        assert not missing, f"{module_name} defines public names not re-exported: {missing}"


def test_exports_report_their_public_module() -> None:
    for name in workqueue.__all__:
        if name.isupper():
            continue  # a constant (a plain int) has no module
        assert getattr(workqueue, name).__module__ == "kubectrl.workqueue", name


def test_every_public_definition_has_a_docstring() -> None:
    for name in workqueue.__all__:
        obj = getattr(workqueue, name)
        if name.isupper():
            continue  # a constant: documented by its #: comment in its module
        assert inspect.getdoc(obj), name
        if not isinstance(obj, type):
            continue
        for attr, member in inspect.getmembers(obj):
            if attr.startswith("_") or not (callable(member) or isinstance(member, property)):
                continue
            assert inspect.getdoc(member), f"{name}.{attr}"


@pytest.mark.parametrize("module_name", [*PRIVATE_MODULES, "kubectrl._internal.clock"])
def test_docstring_examples_run(module_name: str) -> None:
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_docs_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(), flags=re.DOTALL)
    assert blocks, "docs/workqueue.md has no python example"
    exec(compile(blocks[0], str(DOCS), "exec"), {"__name__": "docs_example"})
