"""The Python blocks of docs/typed-resources.md after its CRD part run, and match the sample.

tests/unit/crd/test_docs.py runs the blocks between ``<!-- crd-doc-start`` and
``<!-- crd-doc-end -->``; this runs the ones after (the Foo sample, typed).
"""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubectrl import crd

from .test_sample_controller_crd import EXAMPLE, load

DOC = Path(__file__).parents[3] / "docs" / "typed-resources.md"


@pytest.fixture(scope="module")
def doc_module(tmp_path_factory: pytest.TempPathFactory) -> Iterator[types.ModuleType]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("<!-- crd-doc-end -->", 1)[1]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) >= 2
    # The blocks, in order, as one module imported from a file: pydantic reads attribute
    # docstrings (field descriptions) from the class's source, which exec'd strings lack.
    path = tmp_path_factory.mktemp("doc") / "typed_resources_sample_doc.py"
    path.write_text("\n".join(blocks), encoding="utf-8")
    try:
        yield load("typed_resources_sample_doc", path)
    finally:
        del sys.modules["typed_resources_sample_doc"]


def test_the_sample_blocks_run(doc_module: types.ModuleType) -> None:
    foo = doc_module.Foo.model_validate(
        {"metadata": {"name": "a"}, "spec": {"deploymentName": "web", "replicas": 2}}
    )
    assert (foo.spec.deployment_name, foo.spec.replicas) == ("web", 2)
    assert callable(doc_module.register)


def test_the_doc_shows_the_sample_models_as_they_are(doc_module: types.ModuleType) -> None:
    """The models quoted in the doc generate exactly the CRD of examples/sample_controller."""
    api = load("sample_controller_api", EXAMPLE / "api.py")
    assert crd.generate(doc_module.Foo) == crd.generate(api.Foo)
