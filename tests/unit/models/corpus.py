"""The CRD corpus of the model generator's tests, and how a generated module is loaded and
compared with its CRD.

The corpus: the CRDs under tests/data/crds/third_party (written for these tests in the style of
widely used operators' CRDs), the very large one gen_massive.py builds, and the CRDs this
repository already has.
"""

from __future__ import annotations

import copy
import importlib.util
import sys
import types
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from kubectrl import crd as crd_module
from kubectrl import models
from kubectrl.resources import CustomResource

ROOT = Path(__file__).resolve().parents[3]
THIRD_PARTY = ROOT / "tests" / "data" / "crds" / "third_party"
REPOSITORY_CRDS = [
    ROOT / "tests" / "integration" / "crd" / "everythings.kubectrl.example.com.yaml",
    ROOT / "tests" / "data" / "crds" / "widgets.yaml",
    ROOT / "tests" / "integration" / "client" / "typed_gadgets_crd.yaml",
    ROOT / "examples" / "sample_controller" / "artifacts" / "crd.yaml",
]


def _massive() -> dict[str, Any]:
    spec = importlib.util.spec_from_file_location("gen_massive", THIRD_PARTY / "gen_massive.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    definition: dict[str, Any] = module.definition()
    return definition


@cache
def corpus() -> dict[str, dict[str, Any]]:
    """Every corpus CRD by name."""
    out: dict[str, dict[str, Any]] = {}
    for path in [*sorted(THIRD_PARTY.glob("*.yaml")), *REPOSITORY_CRDS]:
        for definition in models.load_crds(path):
            out[definition["metadata"]["name"]] = definition
    massive = _massive()
    out[massive["metadata"]["name"]] = massive
    return out


def names() -> list[str]:
    """The corpus CRDs' names, in a stable order."""
    return sorted(corpus())


def write(definition: dict[str, Any], directory: Path) -> Path:
    """Generate the CRD's module into ``directory``; its path."""
    path = directory / f"{models.module_name(definition)}.py"
    path.write_text(models.from_crd(definition), encoding="utf-8")
    return path


def load(path: Path) -> types.ModuleType:
    """Import a generated module from its file (under a name no other test uses)."""
    name = f"_kubectrl_generated_{path.stem}_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def resources(module: types.ModuleType) -> list[type[CustomResource]]:
    """The module's CustomResource classes, one per version, in the CRD's order."""
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, CustomResource)
        and value.__module__ == module.__name__
    ]


def regenerated(definition: dict[str, Any], module: types.ModuleType) -> dict[str, Any]:
    """``kubectrl.crd.generate`` of the generated classes."""
    return crd_module.generate(*resources(module), conversion=definition["spec"].get("conversion"))


def comparable(definition: dict[str, Any]) -> dict[str, Any]:
    """A CRD as the comparison sees it: descriptions dropped, ``required`` as a set, and what
    the server treats the same either way made explicit (a one-version CRD converts with
    ``None``, names default their singular and list kind). The top level's apiVersion, kind and
    metadata are compared as written: declared or not, required or not."""
    crd = copy.deepcopy(definition)
    crd.pop("status", None)
    crd["metadata"] = {
        k: v for k, v in crd["metadata"].items() if k in ("name", "annotations", "labels")
    }
    spec = crd["spec"]
    spec.setdefault("conversion", {"strategy": "None"})
    spec["names"].setdefault("singular", spec["names"]["kind"].lower())
    spec["names"].setdefault("listKind", spec["names"]["kind"] + "List")
    return _normalized(crd)


def _normalized(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: (sorted(v) if k == "required" else _normalized(v))
            for k, v in value.items()
            if k != "description"
        }
    if isinstance(value, list):
        return [_normalized(v) for v in value]
    return value


def differences(a: Any, b: Any, path: str = "") -> Iterator[str]:
    """Where two JSON values differ, one line per difference (for readable failures)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a:
                yield f"{path}.{key}: only in the regenerated CRD: {b[key]!r}"[:300]
            elif key not in b:
                yield f"{path}.{key}: missing from the regenerated CRD: {a[key]!r}"[:300]
            else:
                yield from differences(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from differences(x, y, f"{path}[{index}]")
    elif a != b:
        yield f"{path}: {a!r} != {b!r}"[:300]
