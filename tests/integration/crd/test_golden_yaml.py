"""The generator's output for the every-construct model is stable: equal to the committed YAML.

No server needed. Regenerate after a deliberate change, from the repository root, with
``PYTHONPATH=tests python -m kubectrl crd integration.crd.everything:EverythingV1Alpha1
integration.crd.everything:Everything --out tests/integration/crd``.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from kubectrl import crd

from .everything import Everything, EverythingV1Alpha1

GOLDEN = Path(__file__).with_name("everythings.kubectrl.example.com.yaml")


def test_generated_yaml_equals_the_committed_file() -> None:
    text = crd.to_yaml(crd.generate(EverythingV1Alpha1, Everything))
    assert text == GOLDEN.read_text(encoding="utf-8")
    assert yaml.safe_load(text) == crd.generate(EverythingV1Alpha1, Everything)
