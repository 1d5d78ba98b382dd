"""CRD files in, generated modules checked against them."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from kubectrl.models._generate import ModelGenerationError, from_crd, module_name

__all__ = ["assert_up_to_date", "load_crds"]


def load_crds(path: str | Path) -> list[dict[str, Any]]:
    """The CustomResourceDefinitions in a YAML file (one or several documents; empty documents
    are skipped, anything else is refused naming the file and the document).

    Example::

        >>> import pathlib, tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     p = pathlib.Path(d, "x.yaml")
        ...     _ = p.write_text("kind: ConfigMap\\n")
        ...     try:
        ...         load_crds(p)
        ...     except ModelGenerationError as exc:
        ...         print(str(exc).split(": ", 1)[1])
        document 1 is a ConfigMap, not a CustomResourceDefinition
    """
    path = Path(path)
    try:
        documents = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
    except (OSError, yaml.YAMLError) as exc:
        raise ModelGenerationError(f"{path}: cannot read a CRD: {exc}") from exc
    crds: list[dict[str, Any]] = []
    for index, document in enumerate(documents, 1):
        if document is None:
            continue
        kind = document.get("kind") if isinstance(document, Mapping) else type(document).__name__
        if kind != "CustomResourceDefinition":
            raise ModelGenerationError(
                f"{path}: document {index} is a {kind}, not a CustomResourceDefinition"
            )
        crds.append(document)
    if not crds:
        raise ModelGenerationError(f"{path}: no CustomResourceDefinition in the file")
    return crds


def assert_up_to_date(module: str | Path, crd: str | Path, *, version: str | None = None) -> None:
    """Fail (``AssertionError``, with a diff and the command that regenerates it) when a
    committed generated module is not what :func:`from_crd` makes of its CRD file now.

    For a test::

        def test_the_certificate_models_are_up_to_date() -> None:
            assert_up_to_date("myop/apis/certificates.py", "crds/certificates.yaml")
    """
    module, crd = Path(module), Path(crd)
    (definition,) = _one(crd)
    expected = from_crd(definition, version=version)
    actual = module.read_text(encoding="utf-8") if module.exists() else ""
    if actual == expected:
        return
    diff = "".join(
        difflib.unified_diff(
            actual.splitlines(keepends=True),
            expected.splitlines(keepends=True),
            fromfile=f"{module} (committed)",
            tofile=f"{module} (from {crd})",
        )
    )
    command = f"python -m kubectrl models --from-crd {crd} --out {module.parent}"
    if version is not None:
        command += f" --version {version}"
    if module.name != f"{module_name(definition)}.py":
        command = f"python -m kubectrl models --from-crd {crd} > {module}"
    raise AssertionError(f"{module} is out of date with {crd}; regenerate: {command}\n{diff}")


def _one(path: Path) -> list[dict[str, Any]]:
    crds = load_crds(path)
    if len(crds) != 1:
        raise ModelGenerationError(f"{path}: {len(crds)} CRDs in the file; give a file with one")
    return crds
