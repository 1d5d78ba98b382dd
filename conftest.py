"""Settings for the docstring examples that pytest collects from src/kubectrl."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _doctest_module_name(doctest_namespace: dict[str, object]) -> None:
    """Classes defined in a docstring example belong to no importable module.

    Without this they take the name of the module under test, and on Python 3.13 pydantic (whose
    attribute docstrings give custom resources their CRD descriptions) reads that module's file
    at the example's line numbers to find the class source: a SyntaxError while defining a
    ``CustomResource`` in an example.
    """
    doctest_namespace["__name__"] = "__kubectrl_docstring_example__"
