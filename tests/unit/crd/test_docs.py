"""The Python examples of docs/typed-resources.md (custom resources and CRDs) run."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

DOC = Path(__file__).parents[3] / "docs" / "typed-resources.md"


def test_the_custom_resource_examples_run() -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("<!-- crd-doc-start", 1)[1].split("<!-- crd-doc-end -->", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) >= 3
    # One module for all blocks, registered so pydantic can resolve the annotations in it.
    module = types.ModuleType("typed_resources_doc")
    sys.modules[module.__name__] = module
    try:
        for block in blocks:
            exec(compile(block, str(DOC), "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
